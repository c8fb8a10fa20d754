"""Conversation compaction: one summary message in place of the older turns (no Celery)."""
