"""Configuration checked before a process takes any work: ``tersify doctor`` and the start-up
checks of ``tersify worker``, ``tersify api`` and ``tersify mcp-proxy``.

May import the producer (settings, Redis clients, liveness); never Celery, the
broker, the jobs or the runtime: it runs before any of them exists.
"""
