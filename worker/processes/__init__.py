"""Processes this host runs: a private ``redis-server`` (demo, tests, benchmarks), worker
processes started and stopped as a unit (``WorkerProcess``), and the supervisor behind
``tersify worker --processes N``.

Imports only ``producer``: it starts workers as processes, never in-process.
"""
