"""Conversation compaction: one summary message in place of the older turns (no Celery).

Messages and their tool-call pairs, the prompt, the summary's sections and its fallback. May
import ``model``, ``shrink`` and ``store``; the compaction job's life is ``worker.jobs``'.
"""
