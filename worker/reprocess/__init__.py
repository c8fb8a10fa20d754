"""Batch re-summarizing of archived session logs on the ``batch`` queue (``tersify reprocess``).

A producer-side tool: submits through ``producer`` and prices with ``worker.model``; never
imports Celery or the worker's job code.
"""
