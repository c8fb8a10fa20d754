"""The Redis-backed session gate: while a job for a session runs, the user's next input waits.

Each live job holds the gate of its session with a lease (renewed by its worker, never past a
cap) and a fencing token. The gate is open when no hold is live; a lease that is not renewed
opens the gate by itself when it expires. A sweeper (``claim_expired``) finishes abandoned jobs
with a fresh token so a slow worker's result arrives LATE instead of being applied twice.
Batch jobs never touch the gate: callers simply do not call ``close_for`` for them.

``SessionGate`` (blocking redis-py) and ``AsyncSessionGate`` (``redis.asyncio``) share the Lua
(``producer.gate_scripts``) and the argument building and reply parsing (``_Protocol``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, TypeVar

import redis
import redis.asyncio
import structlog
from pydantic import BaseModel, ConfigDict

from producer import keys
from producer.errors import InvalidJobError, RedisUnavailableError
from producer.gate_scripts import SOURCES
from producer.settings import Settings

__all__ = [
    "AsyncSessionGate",
    "CompletionOutcome",
    "ExpiredHold",
    "GateJob",
    "GateStatus",
    "SessionGate",
]

_log = structlog.get_logger(__name__)

# Waiters re-check at least this often, so a lost pub/sub message costs at most this much.
_RECHECK_SECONDS = 1.0
# Gate records outlive their cap by this much, so a sweeper that was itself down for a while
# still finds the jobs it has to finish.
_MARGIN_MS = 60_000
_SID_MARK = "\x00"
_UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError)
T = TypeVar("T")


class CompletionOutcome(StrEnum):
    """What ``complete`` did with a result."""

    APPLIED = "applied"
    LATE = "late"


@dataclass(frozen=True, slots=True)
class ExpiredHold:
    """A hold whose lease ran out, now claimed by one sweeper under a fresh fencing ``token``."""

    session_id: str
    job_id: str
    token: int
    tool_type: str | None


class GateJob(BaseModel):
    """One live hold, as ``status`` reports it."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    tool_type: str | None
    age_seconds: float
    expires_in_seconds: float
    token: int


class GateStatus(BaseModel):
    """A session's gate: open or not, the live holds keeping it closed, the input waiting."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    open: bool
    jobs: list[GateJob]
    held_inputs: int


@dataclass(frozen=True, slots=True)
class _Call(Generic[T]):
    """One script invocation: which script, its KEYS and ARGV, and how to read its reply."""

    operation: str
    script: str
    keys: tuple[str, ...]
    args: tuple[str | int, ...]
    parse: Callable[[Any], T]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _template(key_of: Callable[[str], str]) -> tuple[str, str]:
    prefix, _, suffix = key_of(_SID_MARK).partition(_SID_MARK)
    return prefix, suffix


def _ids(*values: str) -> None:
    # "\n" separates session and job in the global index; an empty id would alias others
    for value in values:
        if not value or "\n" in value:
            raise InvalidJobError(f"gate ids must be non-empty and single-line: {value!r}")


class _Protocol:
    """Builds every gate call from settings and ids, and parses the replies (sync and async)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.lease_ms = max(1, round(settings.gate_lease_seconds * 1000))
        self.cap_ms = max(1, round(settings.gate_max_seconds * 1000))
        self.margin_ms = self.lease_ms + _MARGIN_MS
        held_ttl_s = max(settings.result_ttl_seconds, (self.cap_ms + self.margin_ms) / 1000)
        self.held_ttl_ms = round(held_ttl_s * 1000)
        self.templates: tuple[str, ...] = tuple(
            part
            for key_of in (keys.gate_holds, keys.gate_jobs, keys.gate_events)
            for part in _template(key_of)
        )

    def close(self, sid: str, job: str, tool_type: str | None, cap: float | None) -> _Call[int]:
        _ids(sid, job)
        if cap is not None and cap <= 0:
            raise InvalidJobError(f"cap_seconds must be positive, got {cap}")
        cap_ms = self.cap_ms if cap is None else max(1, min(self.cap_ms, round(cap * 1000)))
        ks = (keys.gate_holds(sid), keys.gate_jobs(sid), keys.gate_expiries(), keys.gate_token())
        args = (sid, job, self.lease_ms, cap_ms, tool_type or "", self.margin_ms)
        return _Call("close_for", "close", ks, args, int)

    def renew(self, sid: str, job: str, token: int) -> _Call[bool]:
        ks = (keys.gate_holds(sid), keys.gate_jobs(sid), keys.gate_expiries())
        return _Call("renew", "renew", ks, (sid, job, token), lambda reply: reply == 1)

    def release(self, sid: str, job: str, token: int) -> _Call[bool]:
        def parse(reply: Any) -> bool:
            if reply == 1:
                return True
            reason = "unknown_job" if reply == 0 else "stale_token"
            _log.warning(
                "gate_release_ignored", session_id=sid, job_id=job, token=token, reason=reason
            )
            return False

        ks = (
            keys.gate_holds(sid),
            keys.gate_jobs(sid),
            keys.gate_expiries(),
            keys.gate_finishing(),
        )
        return _Call("release", "release", ks, (sid, job, token, keys.gate_events(sid)), parse)

    def complete(
        self, job: str, result_json: str, ttl: int, sid: str | None, token: int | None
    ) -> _Call[CompletionOutcome]:
        if (sid is None) != (token is None):
            raise ValueError("complete needs both session_id and token, or neither (batch)")
        if ttl <= 0:
            raise ValueError(f"ttl must be positive, got {ttl}")
        ks: tuple[str, ...] = (keys.result(job), keys.late_result(job))
        args: tuple[str | int, ...] = (job, result_json, ttl)
        if sid is not None and token is not None:
            _ids(sid, job)
            ks += (keys.gate_holds(sid), keys.gate_jobs(sid))
            ks += (keys.gate_expiries(), keys.gate_finishing())
            args += (sid, token, keys.gate_events(sid))
        return _Call(
            "complete", "complete", ks, args, lambda reply: CompletionOutcome(_text(reply))
        )

    def claim(self, limit: int, claim_seconds: float | None) -> _Call[list[ExpiredHold]]:
        seconds = self.settings.gate_lease_seconds if claim_seconds is None else claim_seconds
        if limit < 1 or seconds <= 0:
            raise ValueError(
                f"claim needs limit >= 1 and a positive claim lease: {limit}, {seconds}"
            )
        ks = (keys.gate_expiries(), keys.gate_finishing(), keys.gate_token())
        args: tuple[str | int, ...] = (limit, max(1, round(seconds * 1000)), self.margin_ms)
        args += self.templates

        def parse(reply: Any) -> list[ExpiredHold]:
            return [
                ExpiredHold(_text(sid), _text(job), int(token), _text(tool) or None)
                for sid, job, token, tool in reply
            ]

        return _Call("claim_expired", "claim", ks, args, parse)

    def state(self, sid: str) -> _Call[tuple[int, int]]:
        return _Call(
            "is_open", "state", (keys.gate_holds(sid),), (), lambda r: (int(r[0]), int(r[1]))
        )

    def status(self, sid: str) -> _Call[GateStatus]:
        def parse(reply: Any) -> GateStatus:
            now, held, flat = int(reply[0]), int(reply[1]), reply[2:]
            jobs = []
            for i in range(0, len(flat), 3):
                record = json.loads(_text(flat[i + 2]))
                expiry = float(_text(flat[i + 1]))
                job = GateJob(
                    job_id=_text(flat[i]),
                    tool_type=record.get("tool_type") or None,
                    age_seconds=(now - record.get("closed_at_ms", now)) / 1000,
                    expires_in_seconds=(expiry - now) / 1000,
                    token=int(record.get("token", 0)),
                )
                jobs.append(job)
            return GateStatus(session_id=sid, open=not jobs, jobs=jobs, held_inputs=held)

        ks = (keys.gate_holds(sid), keys.gate_jobs(sid), keys.gate_held(sid))
        return _Call("status", "status", ks, (), parse)

    def hold(self, sid: str, message: str) -> _Call[int]:
        _ids(sid)
        return _Call("hold_input", "hold", (keys.gate_held(sid),), (message, self.held_ttl_ms), int)

    def take(self, sid: str) -> _Call[list[str]]:
        ks = (keys.gate_holds(sid), keys.gate_held(sid))
        return _Call("take_held", "take", ks, (), lambda reply: [_text(m) for m in reply])


def _redact(exc: BaseException) -> str:
    # redis URLs may carry a password (redis://user:secret@host); never let one into a message
    return re.sub(r"://[^@/\s]*@", "://***@", f"{type(exc).__name__}: {exc}")


@contextmanager
def _unavailable_as_error(operation: str) -> Iterator[None]:
    try:
        yield
    except _UNAVAILABLE as exc:
        raise RedisUnavailableError(
            f"gate {operation}: redis unavailable ({_redact(exc)})"
        ) from None


def _fail_open(settings: Settings, operation: str, sid: str, exc: BaseException) -> bool:
    if not settings.gate_fail_open:
        raise RedisUnavailableError(
            f"gate {operation}: redis unavailable ({_redact(exc)})"
        ) from None
    _log.error("gate_redis_unavailable", operation=operation, session_id=sid, error=_redact(exc))
    return True


def _wait_step(state: tuple[int, int], deadline: float) -> bool | float:
    """True when open, False when out of time, else how long to wait before re-checking."""
    live, next_expiry_ms = state
    if live == 0:
        return True
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    # wake exactly when the earliest hold expires, a lease ending opens the gate unannounced
    return min(remaining, _RECHECK_SECONDS, next_expiry_ms / 1000 + 0.001)


class SessionGate:
    """The session gate over a blocking redis-py client (thread-safe; one per process is enough).

    Interactive jobs only: batch jobs never call ``close_for``, ``renew`` or ``release``, and
    complete with no session or token.

    Every method raises ``RedisUnavailableError`` when Redis cannot be reached, except
    ``is_open`` and ``wait_open``: with ``gate_fail_open`` (the default) they log
    ``gate_redis_unavailable`` at error level and report the gate open, because a user locked
    out by a Redis outage is worse than input racing a summary; without it they raise too.
    """

    def __init__(self, client: redis.Redis, settings: Settings) -> None:
        self._client = client
        self._settings = settings
        self._protocol = _Protocol(settings)
        self._scripts = {name: client.register_script(src) for name, src in SOURCES.items()}

    def _run(self, call: _Call[T]) -> T:
        with _unavailable_as_error(call.operation):
            reply = self._scripts[call.script](keys=call.keys, args=call.args)
        return call.parse(reply)

    def close_for(
        self,
        session_id: str,
        job_id: str,
        *,
        tool_type: str | None = None,
        cap_seconds: float | None = None,
    ) -> int:
        """Hold the session's gate for ``job_id`` before publishing it; returns its fence token."""
        return self._run(self._protocol.close(session_id, job_id, tool_type, cap_seconds))

    def reopen_for(self, session_id: str, job_id: str, token: int) -> bool:
        """Drop the hold taken by ``close_for`` when publishing the job failed."""
        return self.release(session_id, job_id, token)

    def renew(self, session_id: str, job_id: str, token: int) -> bool:
        """Extend the lease by ``gate_lease_seconds`` (never past the cap); False: hold lost."""
        return self._run(self._protocol.renew(session_id, job_id, token))

    def release(self, session_id: str, job_id: str, token: int) -> bool:
        """Remove the hold if ``token`` still owns it; otherwise log and return False."""
        return self._run(self._protocol.release(session_id, job_id, token))

    def complete(
        self,
        job_id: str,
        result_json: str,
        *,
        ttl: int,
        session_id: str | None = None,
        token: int | None = None,
    ) -> CompletionOutcome:
        """Store a result and release its hold atomically (batch: no session/token); LATE aside."""
        return self._run(self._protocol.complete(job_id, result_json, ttl, session_id, token))

    def claim_expired(
        self, limit: int = 100, *, claim_seconds: float | None = None
    ) -> list[ExpiredHold]:
        """Take over up to ``limit`` expired holds (and stale claims) for this sweeper to finish."""
        return self._run(self._protocol.claim(limit, claim_seconds))

    def is_open(self, session_id: str) -> bool:
        """True when no live hold keeps the session's gate closed (see the class on outages)."""
        try:
            return self._state(session_id)[0] == 0
        except _UNAVAILABLE as exc:
            return _fail_open(self._settings, "is_open", session_id, exc)

    def status(self, session_id: str) -> GateStatus:
        """The session's gate, its live holds and how much input is held."""
        return self._run(self._protocol.status(session_id))

    def wait_open(self, session_id: str, timeout: float) -> bool:
        """Block until the gate is open (True) or ``timeout`` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        try:
            # redis-py leaves the blocking client's pubsub() unannotated
            with self._client.pubsub() as pubsub:  # type: ignore[no-untyped-call]
                # subscribe before looking, so an opening between the two is never missed
                pubsub.subscribe(keys.gate_events(session_id))
                pubsub.get_message(timeout=max(0.0, min(timeout, _RECHECK_SECONDS)))
                while True:
                    step = _wait_step(self._state(session_id), deadline)
                    if isinstance(step, bool):
                        return step
                    pubsub.get_message(timeout=step)
        except _UNAVAILABLE as exc:
            return _fail_open(self._settings, "wait_open", session_id, exc)

    def hold_input(self, session_id: str, message: str) -> int:
        """Queue user input that arrived while the gate was closed; returns the queue length."""
        return self._run(self._protocol.hold(session_id, message))

    def take_held(self, session_id: str) -> list[str]:
        """All held input, oldest first, removed atomically; [] while the gate is closed."""
        return self._run(self._protocol.take(session_id))

    def _state(self, session_id: str) -> tuple[int, int]:
        call = self._protocol.state(session_id)
        return call.parse(self._scripts[call.script](keys=call.keys, args=call.args))


class AsyncSessionGate:
    """The session gate over ``redis.asyncio``: ``SessionGate``'s methods, as coroutines.

    Outages behave as in ``SessionGate``: ``RedisUnavailableError``, except that ``is_open``
    and ``wait_open`` report open (logged at error level) while ``gate_fail_open`` is set.
    """

    def __init__(self, client: redis.asyncio.Redis, settings: Settings) -> None:
        self._client = client
        self._settings = settings
        self._protocol = _Protocol(settings)
        self._scripts = {name: client.register_script(src) for name, src in SOURCES.items()}

    async def _run(self, call: _Call[T]) -> T:
        with _unavailable_as_error(call.operation):
            reply = await self._scripts[call.script](keys=call.keys, args=call.args)
        return call.parse(reply)

    async def close_for(
        self,
        session_id: str,
        job_id: str,
        *,
        tool_type: str | None = None,
        cap_seconds: float | None = None,
    ) -> int:
        """Hold the session's gate for ``job_id`` before publishing it; returns its fence token."""
        return await self._run(self._protocol.close(session_id, job_id, tool_type, cap_seconds))

    async def reopen_for(self, session_id: str, job_id: str, token: int) -> bool:
        """Drop the hold taken by ``close_for`` when publishing the job failed."""
        return await self.release(session_id, job_id, token)

    async def renew(self, session_id: str, job_id: str, token: int) -> bool:
        """Extend the lease by ``gate_lease_seconds`` (never past the cap); False: hold lost."""
        return await self._run(self._protocol.renew(session_id, job_id, token))

    async def release(self, session_id: str, job_id: str, token: int) -> bool:
        """Remove the hold if ``token`` still owns it; otherwise log and return False."""
        return await self._run(self._protocol.release(session_id, job_id, token))

    async def complete(
        self,
        job_id: str,
        result_json: str,
        *,
        ttl: int,
        session_id: str | None = None,
        token: int | None = None,
    ) -> CompletionOutcome:
        """Store a result and release its hold atomically (batch: no session/token); LATE aside."""
        call = self._protocol.complete(job_id, result_json, ttl, session_id, token)
        return await self._run(call)

    async def claim_expired(
        self, limit: int = 100, *, claim_seconds: float | None = None
    ) -> list[ExpiredHold]:
        """Take over up to ``limit`` expired holds (and stale claims) for this sweeper to finish."""
        return await self._run(self._protocol.claim(limit, claim_seconds))

    async def is_open(self, session_id: str) -> bool:
        """True when no live hold keeps the session's gate closed (see the class on outages)."""
        try:
            return (await self._state(session_id))[0] == 0
        except _UNAVAILABLE as exc:
            return _fail_open(self._settings, "is_open", session_id, exc)

    async def status(self, session_id: str) -> GateStatus:
        """The session's gate, its live holds and how much input is held."""
        return await self._run(self._protocol.status(session_id))

    async def wait_open(self, session_id: str, timeout: float) -> bool:
        """Wait until the gate is open (True) or ``timeout`` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        try:
            async with self._client.pubsub() as pubsub:
                await pubsub.subscribe(keys.gate_events(session_id))
                await pubsub.get_message(timeout=max(0.0, min(timeout, _RECHECK_SECONDS)))
                while True:
                    step = _wait_step(await self._state(session_id), deadline)
                    if isinstance(step, bool):
                        return step
                    await pubsub.get_message(timeout=step)
        except _UNAVAILABLE as exc:
            return _fail_open(self._settings, "wait_open", session_id, exc)

    async def hold_input(self, session_id: str, message: str) -> int:
        """Queue user input that arrived while the gate was closed; returns the queue length."""
        return await self._run(self._protocol.hold(session_id, message))

    async def take_held(self, session_id: str) -> list[str]:
        """All held input, oldest first, removed atomically; [] while the gate is closed."""
        return await self._run(self._protocol.take(session_id))

    async def _state(self, session_id: str) -> tuple[int, int]:
        call = self._protocol.state(session_id)
        return call.parse(await self._scripts[call.script](keys=call.keys, args=call.args))
