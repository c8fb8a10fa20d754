"""The asyncio twin of ``producer.client``: the same contract over ``redis.asyncio``."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import redis
import redis.asyncio
from opentelemetry.trace import SpanKind
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from producer import keys, outputs, payloads, redis_url, tracing
from producer.classify import classify
from producer.client import parse_result, redis_client
from producer.contract import JobOptions, LineRange, PendingSummary, Queue, SummaryResult, ToolType
from producer.errors import JobNotFoundError, RedisUnavailableError, ResultTimeoutError
from producer.forget import Forgotten, forget_session
from producer.gate import AsyncSessionGate
from producer.jobs import (
    build_job,
    check_owner,
    gate_cap,
    job_meta,
    passthrough,
    stage_passthrough_log,
)
from producer.liveness import async_live_workers
from producer.options import summarizes
from producer.publisher import Publisher
from producer.settings import Settings
from producer.wire import SUMMARIZE_TASK, SummaryMessage

_WAIT_SLICE_SECONDS = 5.0
# How long a command waits for a free pooled connection before it counts as Redis unavailable.
_POOL_WAIT_SECONDS = 5.0
# How often a waiter past the blocking slots looks for its result.
_POLL_SECONDS = 0.25


def async_redis_client(settings: Settings, *, decode: bool = False) -> redis.asyncio.Redis:
    """An asyncio Redis client sized and timed for tersify's calls.

    When all ``redis_pool_size`` connections are busy a command waits (up to 5 s) for one to
    come free, instead of failing at once as "Redis unavailable".
    """
    return redis_url.async_client(
        settings,
        max_connections=settings.redis_pool_size,
        timeout=_POOL_WAIT_SECONDS,
        socket_timeout=_WAIT_SLICE_SECONDS + 5.0,
        socket_connect_timeout=5.0,
        decode_responses=decode,
        retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), 3),
    )


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
                            max(0.01, min(remaining, _WAIT_SLICE_SECONDS)),  # type: ignore[arg-type]
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
        self, job_id: str, producer: AsyncProducer, result: SummaryResult | None = None
    ) -> None:
        self.job_id = job_id
        self._producer = producer
        self._result = result

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


class AsyncProducer:
    """``Producer`` for asyncio backends; publishing runs in a thread (its Redis client blocks)."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._redis = async_redis_client(self.settings)
        self._gate_redis = async_redis_client(self.settings, decode=True)
        self.gate = AsyncSessionGate(self._gate_redis, self.settings)
        self._publisher = Publisher(self.settings)
        self._results = ListHeadWaiter(self._redis, self.settings)

    async def submit(
        self,
        *,
        session_id: str,
        tool_name: str,
        output: object,
        command: str | None = None,
        query: str | None = None,
        tool_call_id: str | None = None,
        relevant_lines: LineRange | tuple[int, int] | None = None,
        queue: Queue = Queue.INTERACTIVE,
        job_id: str | None = None,
        options: JobOptions | dict[str, Any] | None = None,
        tenant: str | None = None,
    ) -> AsyncSummaryHandle:
        """Enqueue ``output`` (or pass it through when short); see ``Producer.submit``."""
        job = build_job(
            self.settings,
            session_id=session_id,
            tool_name=tool_name,
            output=output,
            command=command,
            query=query,
            tool_call_id=tool_call_id,
            relevant_lines=relevant_lines,
            queue=queue,
            job_id=job_id,
            options=options,
            tenant=tenant,
        )
        tool_type = classify(job.tool_name, job.command, job.output)
        if not summarizes(self.settings, job):
            result = passthrough(job, tool_type)
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    stage_passthrough_log(pipe, job, result)
                    await pipe.execute()
            except redis.RedisError:
                pass  # the answer matters more than the archive (docs/RELIABILITY.md)
            return AsyncSummaryHandle(job.job_id, self, result)
        with tracing.tracer.start_as_current_span(
            "tersify.submit", kind=SpanKind.PRODUCER, attributes=tracing.job_attributes(job)
        ):
            await self._enqueue(job, tool_type)
        return AsyncSummaryHandle(job.job_id, self)

    async def _enqueue(self, job: PendingSummary, tool_type: ToolType) -> None:
        digest, blob = payloads.encode(job.output)
        meta_key = keys.job_meta(job.job_id)
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.hsetnx(meta_key, "session_id", job.session_id)
                pipe.hget(meta_key, "session_id")
                pipe.expire(meta_key, self.settings.result_ttl_seconds, nx=True)
                owner = (await pipe.execute())[1]
        except redis.RedisError as exc:
            raise RedisUnavailableError(f"could not store the job: {type(exc).__name__}") from None
        check_owner(job, owner)  # before anything else is written: nothing to undo
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                payloads.stage(pipe, digest, blob, self.settings.payload_ttl_seconds)
                if job.output_ref is not None:
                    outputs.stage(
                        pipe,
                        job.output_ref,
                        job.session_id,
                        digest,
                        self.settings.payload_ttl_seconds,
                    )
                pipe.hset(meta_key, mapping=job_meta(job, digest, tool_type))
                pipe.expire(meta_key, self.settings.result_ttl_seconds)
                await pipe.execute()
        except redis.RedisError as exc:
            raise RedisUnavailableError(f"could not store the job: {type(exc).__name__}") from None
        token: int | None = None
        try:
            if job.queue is Queue.INTERACTIVE:
                token = await self.gate.close_for(
                    job.session_id,
                    job.job_id,
                    tool_type=tool_type.value,
                    cap_seconds=gate_cap(self.settings),
                )
            message: dict[str, Any] = SummaryMessage.for_job(job, digest, token).model_dump(
                mode="json"
            )
            headers = tracing.carrier()
            await asyncio.to_thread(
                self._publisher.publish, SUMMARIZE_TASK, message, job.queue, job.job_id, headers
            )
        except BaseException:
            await self._undo(job, token)
            raise

    async def _undo(self, job: PendingSummary, token: int | None) -> None:
        try:
            if token is not None:
                await self.gate.reopen_for(job.session_id, job.job_id, token)
            await self._redis.delete(keys.job_meta(job.job_id))
        except (redis.RedisError, RedisUnavailableError):
            pass  # Redis is gone: so is the state to undo, and the gate's lease expires anyway

    async def get(self, job_id: str) -> SummaryResult | None:
        """The stored result, None while running, ``JobNotFoundError`` if unknown."""
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.lindex(keys.result(job_id), 0)
                pipe.exists(keys.job_meta(job_id))
                raw, known = await pipe.execute()
        except redis.RedisError as exc:
            raise RedisUnavailableError(
                f"could not read the result: {type(exc).__name__}"
            ) from None
        if raw is not None:
            return parse_result(raw)
        if not known:
            raise JobNotFoundError(f"no job {job_id!r} (never submitted, or its result expired)")
        return None

    async def wait(self, job_id: str, timeout: float = 60.0) -> SummaryResult:
        """Wait until the job's result is stored; ``ResultTimeoutError`` after ``timeout``."""
        raw = await self._results.head(keys.result(job_id), timeout)
        if raw is None:
            raise ResultTimeoutError(f"no result for job {job_id!r} within {timeout:g}s")
        return parse_result(raw)

    async def forget(self, session_id: str) -> Forgotten:
        """``Producer.forget``: delete everything Redis holds for a session (in a thread)."""
        client = redis_client(self.settings)
        try:
            return await asyncio.to_thread(forget_session, client, session_id)
        except redis.RedisError as exc:
            raise RedisUnavailableError(f"could not forget: {type(exc).__name__}") from None
        finally:
            client.close()

    async def read_output(
        self,
        ref: str,
        offset: int = 0,
        limit: int = outputs.DEFAULT_LIMIT,
        *,
        grep: str | None = None,
        session_id: str | outputs.Allows | None = None,
    ) -> outputs.OutputRange:
        """Lines of a result's full output by its ``output_ref``; see ``Producer.read_output``."""
        return await outputs.async_read_output(
            self._redis, ref, offset, limit, grep=grep, allows=outputs.only(session_id)
        )

    async def live_workers(self, queue: Queue = Queue.INTERACTIVE) -> int:
        """How many workers with a live heartbeat take jobs from ``queue`` (one Redis call)."""
        return await async_live_workers(self._redis, queue)

    async def close(self) -> None:
        """Close connections."""
        self._publisher.close()
        await redis_url.aclose(self._redis)
        await redis_url.aclose(self._gate_redis)

    async def __aenter__(self) -> AsyncProducer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
