"""tersify: large tool outputs summarized on a queue, for LLM agents.

What a backend imports (the base install: redis, pydantic, structlog, no Celery)::

    from tersify import Producer, AsyncProducer

The package's parts are layers; each imports only those below it (``lint-imports`` keeps it
so, and the producer's parts never import ``worker``):

- ``worker``               what runs under Celery and the tools around it (``tersify[worker]``)
- ``client``               ``Producer``/``AsyncProducer``: every operation once, two faces
- ``chat``, ``classify``   conversations and their compaction jobs; an output's tool type
- ``gate``, ``text``       the session gate; the inline text tools and shared text helpers
- ``store``                Redis keys, clients, payloads, the wire message, publishing, webhooks
- ``errors``               every exception, in one tree
- ``contract``, ``settings``
                           the versioned job and result models; the one ``Settings`` class

In the source tree this package is the ``producer/`` folder and ``tersify.worker`` the
``worker/`` folder: ``pyproject.toml`` maps them, so an install puts only ``tersify`` into
site-packages and a user's own ``producer.py`` or ``worker.py`` can never shadow it.
"""

from importlib.metadata import PackageNotFoundError, version

from tersify.client import AsyncProducer, AsyncSummaryHandle, Producer, SummaryHandle
from tersify.contract import JobOptions, LineRange, Method, Queue, SummaryResult, ToolType
from tersify.errors import (
    InvalidJobError,
    JobNotFoundError,
    OutputTooLargeError,
    RedisUnavailableError,
    ResultTimeoutError,
    TersifyError,
)
from tersify.settings import Settings

try:
    __version__ = version("tersify")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "AsyncProducer",
    "AsyncSummaryHandle",
    "InvalidJobError",
    "JobNotFoundError",
    "JobOptions",
    "LineRange",
    "Method",
    "OutputTooLargeError",
    "Producer",
    "Queue",
    "RedisUnavailableError",
    "ResultTimeoutError",
    "Settings",
    "SummaryHandle",
    "SummaryResult",
    "TersifyError",
    "ToolType",
    "__version__",
]
