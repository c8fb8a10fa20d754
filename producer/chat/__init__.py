"""Chat messages: the one conversation model, and compaction jobs over it.

- ``calls``       ``ToolCall`` and ``ToolResult`` from any arrival path, and ``command_of``:
                  the command a call ran, read one way everywhere
- ``messages``    ``Conversation``: messages in the OpenAI, Anthropic or metadata shape parsed
                  into turns, and new messages written back in their shape
- ``pairs``       tool calls and their results: orphans found and repaired
- ``compaction``  the compaction contract: ``CompactionJob`` and ``CompactionResult``

May import ``errors`` and ``contract``.
"""

from tersify.chat.calls import ToolCall, ToolResult, command_of, shell_command
from tersify.chat.messages import Conversation, Role, Turn, parse

__all__ = [
    "Conversation",
    "Role",
    "ToolCall",
    "ToolResult",
    "Turn",
    "command_of",
    "parse",
    "shell_command",
]
