"""Celery and kombu: the only code that imports them (the worker app, its signals, the tasks,
the consumer, the hardened Redis transport, the queue-entry check, redelivery).

Tasks are thin adapters over ``worker.jobs``. May import every layer below it.
"""
