"""The HTTP API (``tersify api``): the producer contract over HTTP, for backends in any language.

The service holds no state of its own: every request is answered from Redis through the
``producer`` package, so any number of API processes can run side by side behind one port.

A producer-side tool: imports ``producer`` and ``worker.runtime.logconfig``, never Celery or the
worker's job code.
"""
