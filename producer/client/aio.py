"""``AsyncProducer``: the asyncio face of the client (``redis.asyncio``); the operations are
``client.core``'s, so it offers every operation the blocking ``Producer`` does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar, Unpack

import redis
import redis.asyncio

from tersify.chat.compaction import CompactionResult
from tersify.client import core, liveness, results, submission
from tersify.client.apart import APART_CHARS, Apart
from tersify.client.cancel import Cancellation, cancel_job
from tersify.client.forget import Forgotten, forget_session
from tersify.client.outputs import DEFAULT_LIMIT, Lookup, OutputRange, only, read_output
from tersify.contract import Queue, SummaryResult
from tersify.errors import RedisUnavailableError
from tersify.gate import AsyncSessionGate
from tersify.settings import Settings
from tersify.store import redis_url
from tersify.store.commands import load

T = TypeVar("T")

# How often a waiter past the blocking slots looks for its result.
_POLL_SECONDS = 0.25


class ListHeadWaiter:
    """Waits for the first item of a Redis list (a stored result) without starving the client.

    A waiter blocks in ``BLMOVE`` from the list onto itself (woken the moment the worker pushes,
    the value left in place) while one of the blocking slots is free: half of the client's
    connections, so the other half always serves submits and reads. Past that, a waiter reads
    ``LINDEX`` every 0.25 s instead, holding no connection while it sleeps: any number of
    waiters, each at most a poll interval late.
    """

    def __init__(self, client: redis.asyncio.Redis, settings: Settings) -> None:
        self._client = client
        self._slots = asyncio.Semaphore(max(1, settings.redis_pool_size // 2))

    async def head(self, key: str, timeout: float) -> Any:
        """The list's first item, or None once ``timeout`` passed; looks at least once."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                if self._slots.locked():
                    raw = await self._client.lindex(key, 0)  # type: ignore[misc]
                    if raw is None and remaining > 0:
                        await asyncio.sleep(min(_POLL_SECONDS, remaining))
                        continue  # and look once more, even when the deadline came meanwhile
                else:
                    async with self._slots:
                        raw = await self._client.blmove(
                            key,
                            key,
                            # redis-py's stub says int; Redis takes fractional seconds here
                            max(0.01, min(remaining, redis_url.WAIT_SLICE_SECONDS)),  # type: ignore[arg-type]
                            "LEFT",
                            "RIGHT",
                        )
            except (redis.ConnectionError, redis.TimeoutError):
                if remaining <= 0:
                    raise RedisUnavailableError("Redis unreachable while waiting") from None
                await asyncio.sleep(min(0.2, remaining))
                continue
            if raw is not None or time.monotonic() >= deadline:
                return raw


class AsyncSummaryHandle:
    """A submitted job, awaited."""

    def __init__(
        self, job_id: str, session_id: str, producer: AsyncProducer, result: SummaryResult | None
    ) -> None:
        self.job_id = job_id
        self.session_id = session_id
        self._producer = producer
        self._result = result
        self.queued = result is None  # False: the result came back at submission (passthrough)

    async def result(self) -> SummaryResult | None:
        """The result if it is stored, else None."""
        if self._result is None:
            self._result = await self._producer.get(self.job_id)
        return self._result

    async def wait(self, timeout: float = 60.0) -> SummaryResult:
        """Wait for the result (notified); ``ResultTimeoutError`` after ``timeout``."""
        if self._result is None:
            self._result = await self._producer.wait(self.job_id, timeout)
        return self._result


class AsyncCompactionHandle:
    """A submitted compaction job, awaited."""

    def __init__(self, job_id: str, producer: AsyncProducer) -> None:
        self.job_id = job_id
        self._producer = producer

    async def wait(self, timeout: float = 120.0) -> CompactionResult:
        """Wait for the compaction result."""
        return await self._producer.wait_compaction(self.job_id, timeout)


class AsyncProducer:
    """``Producer`` for asyncio backends: the same operations, as coroutines, every Redis
    call (publishing included) on one ``redis.asyncio`` client; the CPU work on a large output
    (cutting, classifying, hashing, compressing, scanning: ``core.Compute``) on a thread, or in
    a process of its own when very large (``client/apart.py``)."""

    def __init__(self, settings: Settings | None = None, *, apart: bool = False) -> None:
        """``apart``: very large steps marked so run in a child process (``client/apart.py``).
        Off by default: the child is a ``spawn``ed interpreter, which imports the program's
        main module again, so only a program whose main module is guarded (``if __name__ ==
        "__main__"``), as tersify's own servers are, should turn it on."""
        self.settings = settings or Settings()
        self._redis = redis_url.async_redis_client(self.settings)
        self._gate_redis = redis_url.async_redis_client(self.settings, decode=True)
        self.gate = AsyncSessionGate(self._gate_redis, self.settings)
        self._results = ListHeadWaiter(self._redis, self.settings)
        self._compute = asyncio.Semaphore(core.COMPUTE_SLOTS)
        self._apart = Apart() if apart else None

    async def submit(self, **fields: Unpack[submission.Submission]) -> AsyncSummaryHandle:
        """Enqueue a tool output (or pass it through when short); see ``Producer.submit``."""
        job, result = await self._run(submission.submit(self.settings, self.gate.calls, fields))
        return AsyncSummaryHandle(job.job_id, job.session_id, self, result)

    async def get(self, job_id: str) -> SummaryResult | None:
        """The stored result, None while running, ``JobNotFoundError`` if unknown."""
        return await self._run(results.get(job_id))

    async def get_late(self, job_id: str) -> SummaryResult | None:
        """A result that arrived after the job had been finished by the sweeper, if any."""
        return await self._run(results.get_late(job_id))

    async def wait(self, job_id: str, timeout: float = 60.0) -> SummaryResult:
        """Wait until the job's result is stored; ``ResultTimeoutError`` after ``timeout``."""
        return await self._run(results.wait(job_id, timeout))

    async def compact(
        self, **fields: Unpack[submission.CompactionRequest]
    ) -> AsyncCompactionHandle:
        """Enqueue a compaction of a conversation; see ``Producer.compact``."""
        job_id = await self._run(submission.compact(self.settings, fields))
        return AsyncCompactionHandle(job_id, self)

    async def wait_compaction(self, job_id: str, timeout: float = 120.0) -> CompactionResult:
        """Wait until a compaction result is stored; ``ResultTimeoutError`` after ``timeout``."""
        return await self._run(results.wait_compaction(job_id, timeout))

    async def cancel(self, job_id: str) -> Cancellation:
        """Cancel a job; see ``Producer.cancel``."""
        return await self._run(cancel_job(self.settings, self.gate.calls, job_id))

    async def forget(self, session_id: str) -> Forgotten:
        """Delete everything Redis holds for a session; see ``Producer.forget``."""
        return await self._run(forget_session(self.settings, session_id))

    async def read_output(
        self, ref: str, offset: int = 0, limit: int = DEFAULT_LIMIT, **by: Unpack[Lookup]
    ) -> OutputRange:
        """Lines of a full output by its ``output_ref``: ``limit`` from ``offset``, or those
        with ``grep``; ``JobNotFoundError`` for an unknown, expired or refused ref."""
        allows = only(by.get("session_id"))
        return await self._run(
            read_output(self.settings, ref, offset, limit, grep=by.get("grep"), allows=allows)
        )

    async def compute(
        self, function: Callable[..., T], *args: Any, size: int | None, apart: bool = False
    ) -> T:
        """``function(*args)`` off the event loop when ``size`` (the text it works on; None:
        unknown) is large, in place when small: the one way a server on this producer keeps a
        client's large request from stalling the others (see ``core.Compute``). ``apart``: a
        function with no effect but its answer, on arguments that pickle, which may then run in
        a process of its own when very large."""
        result: T = await self._perform(core.Compute(function, args, size, apart))
        return result

    async def live_workers(self, queue: Queue = Queue.INTERACTIVE) -> int:
        """How many workers with a live heartbeat take jobs from ``queue`` (one Redis call)."""
        return await self._run(liveness.live_workers(queue))

    async def worker_alive(self, hostname: str) -> bool:
        """Whether the worker ``hostname`` has a live heartbeat record."""
        return await self._run(liveness.worker_alive(hostname))

    async def job_queue(self, job_id: str) -> Queue | None:
        """The queue a job was sent to; None when it is unknown or expired."""
        return await self._run(liveness.job_queue(job_id))

    async def job_session(self, job_id: str) -> str | None:
        """The session a job belongs to; None when it is unknown or expired."""
        return await self._run(liveness.job_session(job_id))

    async def job_started(self, job_id: str) -> bool:
        """Whether a worker has taken the job; False while it waits in its queue."""
        return await self._run(liveness.job_started(job_id))

    async def _run(self, operation: core.Operation[core.T]) -> core.T:
        return await core.run_async(operation, self._perform)

    async def _perform(self, step: core.Step) -> Any:
        if isinstance(step, core.Round):
            with core.unavailable(step, self.settings.redis_url):
                async with self._redis.pipeline(step.transaction) as pipe:
                    return await load(pipe, step.commands).execute()
        if isinstance(step, core.GateScript):
            return await self.gate.run(step.call)
        if isinstance(step, core.Compute):
            if step.size is not None and step.size < core.INLINE_CHARS:
                return step.function(*step.args)
            async with self._compute:
                large = step.size is None or step.size >= APART_CHARS
                if self._apart is not None and step.apart and large:
                    return await self._apart.run(step.function, step.args)
                return await asyncio.to_thread(step.function, *step.args)
        return await self._results.head(step.key, step.timeout)

    async def close(self) -> None:
        """Close connections, and stop the process of large compute steps if one started."""
        if self._apart is not None:
            self._apart.close()
        await redis_url.aclose(self._redis)
        await redis_url.aclose(self._gate_redis)

    async def __aenter__(self) -> AsyncProducer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
