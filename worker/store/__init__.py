"""Where a worker keeps what it must not lose: the session log on disk and the write-behind
queue for Redis writes that need not delay a job.

The bottom layer: imports nothing of ``worker``.
"""
