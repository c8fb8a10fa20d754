"""Chat messages: conversations in the OpenAI or Anthropic shape, and their compaction jobs.

- ``compaction``  the compaction contract: ``CompactionJob`` and ``CompactionResult``
- ``messages``    a conversation parsed into one internal form, and written back in its shape
- ``pairs``       tool calls and their results: orphans found and repaired

May import ``errors`` and ``contract``.
"""
