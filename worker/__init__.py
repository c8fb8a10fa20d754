"""What runs under Celery, and the tools around it. The folders are layers; each imports only
those below it (``lint-imports`` keeps it so), and a job flows down them:

- ``cli``        the ``tersify`` command, one module per subcommand
- ``api``, ``mcp``, ``reprocess``, ``quality``, ``processes``, ``gateway``
                 producer-side tools (HTTP API, MCP proxy, batch reprocessing, shrink
                 evaluation, local processes, the model-API gateway); they never touch Celery
                 or the worker's internals
- ``broker``     Celery and kombu: the app, signals, tasks, consumer, hardened transport
- ``jobs``       a job's life without Celery: summary and compaction jobs, results, dead
                 letters, the sweeper
- ``metrics``    Prometheus counters, the Redis-state collector, ``tersify status``'s snapshot
- ``runtime``    what a process holds: the ``Runtime``, its scheduler thread, the heartbeat
- ``summarize``, ``compaction``
                 job → summary (prompts, grounding, cache); conversation → compaction summary
- ``model``, ``shrink``
                 calling a model API under one policy; the local shrinks that need no network
- ``store``      the session log and the write-behind queue
"""
