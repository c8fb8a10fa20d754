"""Submit tool outputs for summarization and wait for their results."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import redis
from opentelemetry.trace import SpanKind
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from producer import keys, outputs, payloads, redis_url, tracing
from producer.cancel import Cancellation, cancel
from producer.classify import classify
from producer.compaction import CompactionJob, CompactionResult
from producer.contract import JobOptions, LineRange, PendingSummary, Queue, SummaryResult, ToolType
from producer.errors import (
    InvalidJobError,
    JobNotFoundError,
    OutputTooLargeError,
    RedisUnavailableError,
    ResultTimeoutError,
)
from producer.forget import Forgotten, forget_session
from producer.gate import SessionGate
from producer.jobs import (
    build_job,
    check_owner,
    gate_cap,
    job_meta,
    passthrough,
    stage_passthrough_log,
)
from producer.liveness import live_workers
from producer.options import summarizes
from producer.publisher import Publisher
from producer.settings import Settings
from producer.wire import COMPACT_TASK, SUMMARIZE_TASK, CompactionMessage, SummaryMessage

# One blocking call never outlives the socket timeout; longer waits loop in slices this long.
_WAIT_SLICE_SECONDS = 5.0
_SOCKET_TIMEOUT_SECONDS = _WAIT_SLICE_SECONDS + 5.0
_RECONNECT_PAUSE_SECONDS = 0.2


def redis_client(settings: Settings, *, decode: bool = False) -> redis.Redis:
    """A Redis client sized and timed for tersify's calls."""
    return redis_url.sync_client(
        settings,
        max_connections=settings.redis_pool_size,
        socket_timeout=_SOCKET_TIMEOUT_SECONDS,
        socket_connect_timeout=5.0,
        health_check_interval=30,
        decode_responses=decode,
        # Fail fast (well under a second) when Redis is down, instead of redis-py's ~4 s default.
        retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), 3),
    )


def parse_result(raw: bytes | str, *, late: bool = False) -> SummaryResult:
    """Parse a stored result (a late one is flagged as such)."""
    result = SummaryResult.model_validate_json(raw)
    return result.model_copy(update={"late": True}) if late else result


@dataclass
class SummaryHandle:
    """A submitted job: wait for its result, or read it if it is there."""

    job_id: str
    session_id: str
    _producer: Producer = field(repr=False)
    _result: SummaryResult | None = field(default=None, repr=False)

    @property
    def done(self) -> bool:
        """True once the result is known (always for passthrough)."""
        return self.result() is not None

    def result(self) -> SummaryResult | None:
        """The result if it is stored, else None (never blocks)."""
        if self._result is None:
            self._result = self._producer.get(self.job_id)
        return self._result

    def wait(self, timeout: float = 60.0) -> SummaryResult:
        """Block until the result is stored (notified, not polled); ``ResultTimeoutError`` after."""
        if self._result is None:
            self._result = self._producer.wait(self.job_id, timeout)
        return self._result


@dataclass
class CompactionHandle:
    """A submitted compaction job."""

    job_id: str
    _producer: Producer = field(repr=False)

    def wait(self, timeout: float = 120.0) -> CompactionResult:
        """Block until the compaction result is stored."""
        return self._producer.wait_compaction(self.job_id, timeout)


class Producer:
    """What an agent backend uses: submit outputs, get results, share the session gate."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._redis = redis_client(self.settings)
        self._gate_redis = redis_client(self.settings, decode=True)
        self.gate = SessionGate(self._gate_redis, self.settings)
        self._publisher = Publisher(self.settings)

    def submit(
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
    ) -> SummaryHandle:
        """Enqueue ``output`` for summarization, or hand it straight back when it is short.

        Interactive jobs close the session gate before they are published and reopen it if
        publishing fails; batch jobs never touch the gate. ``options`` (``JobOptions`` or its
        dict) sets this job's budget, summary cap, model, passthrough or webhook.
        """
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
            self._log_passthrough(job, result)
            return SummaryHandle(job.job_id, job.session_id, self, result)
        self.enqueue(job, tool_type)
        return SummaryHandle(job.job_id, job.session_id, self)

    def enqueue(self, job: PendingSummary, tool_type: ToolType) -> None:
        """Store the payload, close the gate (interactive), publish; undo all of it on failure."""
        with tracing.tracer.start_as_current_span(
            "tersify.submit", kind=SpanKind.PRODUCER, attributes=tracing.job_attributes(job)
        ):
            self._enqueue(job, tool_type)

    def _enqueue(self, job: PendingSummary, tool_type: ToolType) -> None:
        digest, blob = payloads.encode(job.output)
        meta = job_meta(job, digest, tool_type)
        ttl = self.settings.result_ttl_seconds
        meta_key = keys.job_meta(job.job_id)
        try:
            with self._redis.pipeline(transaction=True) as pipe:
                pipe.hsetnx(meta_key, "session_id", job.session_id)
                pipe.hget(meta_key, "session_id")
                pipe.expire(meta_key, self.settings.result_ttl_seconds, nx=True)
                owner = pipe.execute()[1]
        except redis.RedisError as exc:
            raise RedisUnavailableError(f"could not store the job: {type(exc).__name__}") from None
        check_owner(job, owner)  # before anything else is written: nothing to undo
        try:
            with self._redis.pipeline(transaction=False) as pipe:
                payloads.stage(pipe, digest, blob, self.settings.payload_ttl_seconds)
                if job.output_ref is not None:
                    outputs.stage(
                        pipe,
                        job.output_ref,
                        job.session_id,
                        digest,
                        self.settings.payload_ttl_seconds,
                    )
                pipe.hset(meta_key, mapping=meta)
                pipe.expire(meta_key, ttl)
                pipe.execute()
        except redis.RedisError as exc:
            raise RedisUnavailableError(f"could not store the job: {type(exc).__name__}") from None
        token: int | None = None
        try:
            if job.queue is Queue.INTERACTIVE:
                token = self.gate.close_for(
                    job.session_id,
                    job.job_id,
                    tool_type=tool_type.value,
                    cap_seconds=gate_cap(self.settings),
                )
            message = SummaryMessage.for_job(job, digest, token).model_dump(mode="json")
            self._publisher.publish(
                SUMMARIZE_TASK, message, job.queue, job.job_id, tracing.carrier()
            )
        except BaseException:
            self._undo(job, token)
            raise

    def _log_passthrough(self, job: PendingSummary, result: SummaryResult) -> None:
        """Hand a passthrough to the workers' session log; Redis down only loses the log line."""
        try:
            with self._redis.pipeline(transaction=False) as pipe:
                stage_passthrough_log(pipe, job, result)
                pipe.execute()
        except redis.RedisError:
            pass  # the answer matters more than the archive (docs/RELIABILITY.md)

    def _undo(self, job: PendingSummary, token: int | None) -> None:
        try:
            if token is not None:
                self.gate.reopen_for(job.session_id, job.job_id, token)
            self._redis.delete(keys.job_meta(job.job_id))
        except (redis.RedisError, RedisUnavailableError):
            pass  # Redis is gone: so is the state to undo, and the gate's lease expires anyway

    def get(self, job_id: str) -> SummaryResult | None:
        """The stored result, or None while the job runs; ``JobNotFoundError`` if unknown."""
        try:
            with self._redis.pipeline(transaction=False) as pipe:
                pipe.lindex(keys.result(job_id), 0)
                pipe.exists(keys.job_meta(job_id))
                raw, known = pipe.execute()
        except redis.RedisError as exc:
            raise RedisUnavailableError(
                f"could not read the result: {type(exc).__name__}"
            ) from None
        if raw is not None:
            return parse_result(raw)
        if not known:
            raise JobNotFoundError(f"no job {job_id!r} (never submitted, or its result expired)")
        return None

    def get_late(self, job_id: str) -> SummaryResult | None:
        """A result that arrived after the job had been finished by the sweeper, if any."""
        raw = self._redis.lindex(keys.late_result(job_id), 0)
        return parse_result(raw, late=True) if isinstance(raw, bytes) else None

    def wait(self, job_id: str, timeout: float = 60.0) -> SummaryResult:
        """Block until the job's result is stored; ``ResultTimeoutError`` after ``timeout``."""
        return parse_result(self._wait_for(keys.result(job_id), job_id, timeout))

    def compact(
        self,
        *,
        session_id: str,
        messages: list[dict[str, Any]],
        previous_summary: str | None = None,
        protect_first: int = 2,
        protect_last: int = 6,
    ) -> CompactionHandle:
        """Enqueue a compaction of ``messages`` (OpenAI or Anthropic shape); see COMPACTION.md."""
        try:
            job = CompactionJob.build(
                deadline_seconds=self.settings.compaction_deadline_seconds,
                session_id=session_id,
                messages=messages,
                previous_summary=previous_summary,
                protect_first=protect_first,
                protect_last=protect_last,
            )
        except ValueError as exc:
            raise InvalidJobError(str(exc)) from None
        body = job.model_dump_json()
        if len(body) > self.settings.max_output_bytes:
            raise OutputTooLargeError(
                f"conversation is over {self.settings.max_output_bytes} bytes"
            )
        digest, blob = payloads.encode(body)
        try:
            with self._redis.pipeline(transaction=False) as pipe:
                payloads.stage(pipe, digest, blob, self.settings.payload_ttl_seconds)
                pipe.set(
                    keys.compaction_job(job.job_id),
                    job.session_id,
                    ex=self.settings.result_ttl_seconds,
                )
                pipe.sadd(keys.session_payloads(job.session_id), digest)
                pipe.expire(
                    keys.session_payloads(job.session_id), self.settings.payload_ttl_seconds
                )
                pipe.execute()
        except redis.RedisError as exc:
            raise RedisUnavailableError(f"could not store the job: {type(exc).__name__}") from None
        message = CompactionMessage(job_id=job.job_id, payload=digest).model_dump(mode="json")
        self._publisher.publish(COMPACT_TASK, message, Queue.INTERACTIVE, job.job_id)
        return CompactionHandle(job.job_id, self)

    def forget(self, session_id: str) -> Forgotten:
        """Delete everything Redis holds for a session: jobs, outputs, results, gate, held input.

        The session's log files live on the worker hosts: ``tersify forget`` there (or the
        HTTP API's ``DELETE /v1/sessions/{id}``) deletes them too.
        """
        try:
            return forget_session(self._redis, session_id)
        except redis.RedisError as exc:
            raise RedisUnavailableError(f"could not forget: {type(exc).__name__}") from None

    def wait_compaction(self, job_id: str, timeout: float = 120.0) -> CompactionResult:
        """Block until a compaction result is stored; ``ResultTimeoutError`` after ``timeout``."""
        raw = self._wait_for(keys.compaction_result(job_id), job_id, timeout)
        return CompactionResult.model_validate_json(raw)

    def _wait_for(self, key: str, job_id: str, timeout: float) -> bytes:
        # BLMOVE from the list to itself wakes every waiter and leaves the value in place. A
        # dropped connection (Redis restarting) is retried until the timeout: the worker stores
        # the result as soon as Redis is back.
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                raw = self._redis.blmove(
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
                time.sleep(min(_RECONNECT_PAUSE_SECONDS, max(0.0, remaining)))
                continue
            if isinstance(raw, bytes):
                return raw
            if time.monotonic() >= deadline:
                raise ResultTimeoutError(f"no result for job {job_id!r} within {timeout:g}s")

    def worker_alive(self, hostname: str) -> bool:
        """Whether the worker ``hostname`` has a live heartbeat record."""
        return bool(self._redis.exists(keys.worker_alive(hostname)))

    def cancel(self, job_id: str) -> Cancellation:
        """Cancel a job: queued, it is dropped; running, it ends now with ``fallback_reason=
        cancelled``; either way its gate hold is released. A finished job is left as it was.
        """
        return cancel(self._redis, self.gate, self.settings, job_id)

    def read_output(
        self,
        ref: str,
        offset: int = 0,
        limit: int = outputs.DEFAULT_LIMIT,
        *,
        grep: str | None = None,
        session_id: str | outputs.Allows | None = None,
    ) -> outputs.OutputRange:
        """Lines of a full output by its ``output_ref``: a range, or those containing ``grep``.

        ``session_id`` (a session id, or a predicate over them) refuses other sessions' outputs
        as not found; ``JobNotFoundError`` also for an unknown or expired ref.
        """
        return outputs.read_output(
            self._redis, ref, offset, limit, grep=grep, allows=outputs.only(session_id)
        )

    def live_workers(self, queue: Queue = Queue.INTERACTIVE) -> int:
        """How many workers with a live heartbeat take jobs from ``queue`` (one Redis call)."""
        return live_workers(self._redis, queue)

    def close(self) -> None:
        """Close connections."""
        self._publisher.close()
        redis_url.close(self._redis)
        redis_url.close(self._gate_redis)

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
