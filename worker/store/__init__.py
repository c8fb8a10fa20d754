"""Where a worker keeps what it must not lose: the session log on disk and the write-behind
queue for Redis writes that need not delay a job; and the log files the offline commands
(``reprocess``, ``savings``) are given to read.

The bottom layer: imports nothing of ``worker``.
"""
