"""What a worker process holds for its whole life: the ``Runtime`` (clients, routes, cache,
session log; built once, no side effects), the ``Scheduler`` thread that renews gate leases and
runs the periodic chores, the heartbeat and logging set-up; for the HTTP servers (the API, the
gateway), the connection cap and request-read deadlines (``connections``).

May import ``summarize``, ``compaction``, ``model``, ``shrink`` and ``store``.
"""
