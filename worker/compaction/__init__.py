"""Conversation compaction: one summary message in place of the older turns (no Celery).

Where the conversation is cut, the prompt, the summary's sections and its fallback, and the facts
read from the conversation's structure (``facts/``); messages and tool-pair repair are
``producer``'s. May import ``model``, ``shrink`` and ``store``; the
compaction job's life is ``worker.jobs``'.
"""
