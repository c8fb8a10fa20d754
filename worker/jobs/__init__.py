"""A job's life without Celery: the summary job, the compaction job, storing results, the
dead-letter list and the sweeper that finishes jobs whose worker died.

May import ``runtime``, ``metrics`` and the layers below; never ``broker``.
"""
