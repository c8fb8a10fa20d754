"""The public client: what a backend calls to submit, wait, read, cancel and forget.

- ``sync``, ``aio``   ``Producer`` and ``AsyncProducer``: thin blocking and asyncio faces
- ``core``            steps and the drivers that run an operation on either face
- ``submission``, ``results``, ``cancel``, ``forget``, ``outputs``, ``liveness``
                      the operations, each written once
- ``jobs``, ``options``, ``tenants``, ``tracing``
                      a submit call made a job; per-job options; tenant quotas; trace context

May import every other part of the producer; the worker imports it, never the reverse.
"""

from tersify.client.aio import AsyncCompactionHandle, AsyncProducer, AsyncSummaryHandle
from tersify.client.submission import CompactionRequest, Submission
from tersify.client.sync import CompactionHandle, Producer, SummaryHandle

__all__ = [
    "AsyncCompactionHandle",
    "AsyncProducer",
    "AsyncSummaryHandle",
    "CompactionHandle",
    "CompactionRequest",
    "Producer",
    "Submission",
    "SummaryHandle",
]
