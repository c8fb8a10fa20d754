"""``Producer``: the blocking face of the client (redis-py); operations from ``client.core``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Unpack

import redis

from tersify.chat.compaction import CompactionResult
from tersify.client import core, liveness, results, submission
from tersify.client.cancel import Cancellation, cancel_job
from tersify.client.forget import Forgotten, forget_session
from tersify.client.outputs import DEFAULT_LIMIT, Lookup, OutputRange, only, read_output
from tersify.contract import Queue, SummaryResult
from tersify.errors import RedisUnavailableError
from tersify.gate import SessionGate
from tersify.settings import Settings
from tersify.store import redis_url
from tersify.store.commands import load

_RECONNECT_PAUSE_SECONDS = 0.2


@dataclass
class SummaryHandle:
    """A submitted job: wait for its result, or read it if it is there."""

    job_id: str
    session_id: str
    _producer: Producer = field(repr=False)
    _result: SummaryResult | None = field(default=None, repr=False)
    queued: bool = field(init=False)
    """True when a job was queued; False when the result came back at submission (a
    passthrough), so there is nothing to wait for."""

    def __post_init__(self) -> None:
        self.queued = self._result is None

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
    """What an agent backend uses: submit outputs, get results, share the session gate.

    Thread-safe; one per process is enough. Every Redis failure raises ``RedisUnavailableError``
    (see the session gate for the ``is_open`` exception).
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._redis = redis_url.redis_client(self.settings)
        self._gate_redis = redis_url.redis_client(self.settings, decode=True)
        self.gate = SessionGate(self._gate_redis, self.settings)

    def submit(self, **fields: Unpack[submission.Submission]) -> SummaryHandle:
        """Enqueue a tool output for summarization, or hand it straight back when it is short
        (see ``Submission`` for the fields)."""
        job, result = self._run(submission.submit(self.settings, self.gate.calls, fields))
        return SummaryHandle(job.job_id, job.session_id, self, result)

    def get(self, job_id: str) -> SummaryResult | None:
        """The stored result, or None while the job runs; ``JobNotFoundError`` if unknown."""
        return self._run(results.get(job_id))

    def get_late(self, job_id: str) -> SummaryResult | None:
        """A result that arrived after the job had been finished by the sweeper, if any."""
        return self._run(results.get_late(job_id))

    def wait(self, job_id: str, timeout: float = 60.0) -> SummaryResult:
        """Block until the job's result is stored; ``ResultTimeoutError`` after ``timeout``."""
        return self._run(results.wait(job_id, timeout))

    def compact(self, **fields: Unpack[submission.CompactionRequest]) -> CompactionHandle:
        """Enqueue a compaction of a conversation (see ``CompactionRequest`` and COMPACTION.md)."""
        return CompactionHandle(self._run(submission.compact(self.settings, fields)), self)

    def wait_compaction(self, job_id: str, timeout: float = 120.0) -> CompactionResult:
        """Block until a compaction result is stored; ``ResultTimeoutError`` after ``timeout``."""
        return self._run(results.wait_compaction(job_id, timeout))

    def cancel(self, job_id: str) -> Cancellation:
        """Cancel a job: queued, it is dropped; running, it ends now with ``fallback_reason=
        cancelled``; either way its gate hold is released. A finished job is left as it was.
        """
        return self._run(cancel_job(self.settings, self.gate.calls, job_id))

    def forget(self, session_id: str) -> Forgotten:
        """Delete everything Redis holds for a session: jobs, outputs, results, gate, held input.

        The session's log files live on the worker hosts: ``tersify forget`` there (or the
        HTTP API's ``DELETE /v1/sessions/{id}``) deletes them too.
        """
        return self._run(forget_session(self.settings, session_id))

    def read_output(
        self, ref: str, offset: int = 0, limit: int = DEFAULT_LIMIT, **by: Unpack[Lookup]
    ) -> OutputRange:
        """Lines of a full output by its ``output_ref``: ``limit`` from ``offset``, or those
        with ``grep``; ``JobNotFoundError`` for an unknown, expired or refused ref."""
        allows = only(by.get("session_id"))
        return self._run(
            read_output(self.settings, ref, offset, limit, grep=by.get("grep"), allows=allows)
        )

    def live_workers(self, queue: Queue = Queue.INTERACTIVE) -> int:
        """How many workers with a live heartbeat take jobs from ``queue`` (one Redis call)."""
        return self._run(liveness.live_workers(queue))

    def worker_alive(self, hostname: str) -> bool:
        """Whether the worker ``hostname`` has a live heartbeat record."""
        return self._run(liveness.worker_alive(hostname))

    def job_queue(self, job_id: str) -> Queue | None:
        """The queue a job was sent to; None when it is unknown or expired."""
        return self._run(liveness.job_queue(job_id))

    def job_session(self, job_id: str) -> str | None:
        """The session a job belongs to; None when it is unknown or expired."""
        return self._run(liveness.job_session(job_id))

    def job_started(self, job_id: str) -> bool:
        """Whether a worker has taken the job; False while it waits in its queue."""
        return self._run(liveness.job_started(job_id))

    def _run(self, operation: core.Operation[core.T]) -> core.T:
        return core.run_sync(operation, self._perform)

    def _perform(self, step: core.Step) -> Any:
        if isinstance(step, core.Round):
            url = self.settings.redis_url
            with core.unavailable(step, url), self._redis.pipeline(step.transaction) as pipe:
                return load(pipe, step.commands).execute()
        if isinstance(step, core.GateScript):
            return self.gate.run(step.call)
        if isinstance(step, core.Compute):
            return step.function(*step.args)
        return self._wait_head(step)

    def _wait_head(self, step: core.WaitHead) -> bytes | None:
        # BLMOVE from the list to itself wakes every waiter and leaves the value in place. A
        # dropped connection (Redis restarting) is retried until the timeout: the worker stores
        # the result as soon as Redis is back.
        deadline = time.monotonic() + step.timeout
        while True:
            remaining = deadline - time.monotonic()
            slice_seconds = max(0.01, min(remaining, redis_url.WAIT_SLICE_SECONDS))
            try:
                # redis-py's stub says int; Redis takes fractional seconds here
                raw = self._redis.blmove(step.key, step.key, slice_seconds, "LEFT", "RIGHT")  # type: ignore[arg-type]
            except (redis.ConnectionError, redis.TimeoutError):
                if remaining <= 0:
                    raise RedisUnavailableError("Redis unreachable while waiting") from None
                time.sleep(min(_RECONNECT_PAUSE_SECONDS, max(0.0, remaining)))
                continue
            if isinstance(raw, bytes) or time.monotonic() >= deadline:
                return raw if isinstance(raw, bytes) else None

    def close(self) -> None:
        """Close connections."""
        redis_url.close(self._redis)
        redis_url.close(self._gate_redis)

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
