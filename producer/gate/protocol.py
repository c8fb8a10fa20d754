"""The session gate's wire protocol, shared by the blocking and asyncio gates.

Each gate operation is one Lua script (``producer.gate_scripts``); ``GateCalls`` turns settings
and ids into a script's KEYS and ARGV and says how to read its reply, so ``SessionGate`` and
``AsyncSessionGate`` differ only in how they send the call.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, Required, TypedDict, TypeVar

import redis
import redis.asyncio
import structlog
from pydantic import BaseModel, ConfigDict

from tersify.errors import HeldInputFullError, InvalidJobError, RedisUnavailableError
from tersify.settings import Settings
from tersify.store import keys
from tersify.store.commands import Command, script_args
from tersify.store.redis_url import shown_url

_log = structlog.get_logger("tersify.gate")

# Waiters re-check at least this often, so a lost pub/sub message costs at most this much.
RECHECK_SECONDS = 1.0
# Gate records outlive their cap by this much, so a sweeper that was itself down for a while
# still finds the jobs it has to finish.
_MARGIN_MS = 60_000
_SID_MARK = "\x00"
UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError)
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


@dataclass(frozen=True, slots=True)
class StoredHold:
    """One hold as a session's gate field keeps it (see ``gate.scripts``)."""

    job_id: str
    token: int
    expiry_ms: int
    closed_at_ms: int
    claimed: bool

    def live(self, now_ms: float) -> bool:
        """Whether the hold keeps the gate closed at ``now_ms``."""
        return not self.claimed and self.expiry_ms > now_ms


def stored_holds(raw: Any) -> list[StoredHold]:
    """The holds in a session's gate field (``sessions.GATE``; None: the session holds none)."""
    if raw is None:
        return []
    holds = json.loads(_text(raw)).get("h") or {}
    return [
        StoredHold(job, int(r["t"]), int(r["e"]), int(r.get("a", 0)), "k" in r)
        for job, r in holds.items()
    ]


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


class Hold(TypedDict, total=False):
    """How a job holds its session's gate: its tool type (``status`` shows it), and a cap."""

    tool_type: str | None
    cap_seconds: float | None


class Stored(TypedDict):
    """What ``enqueue`` writes for a job besides its hold: its ``record`` (JSON, kept
    ``record_ttl`` seconds), its ``payloads`` (digest and blob each, kept ``payload_ttl``), the
    session's index ``fields`` and any other ``writes`` (an output link)."""

    session_id: str
    record: str
    record_ttl: int
    payloads: Sequence[tuple[str, bytes]]
    payload_ttl: int
    fields: Sequence[str]
    writes: Sequence[Command]


class Completion(TypedDict, total=False):
    """How a result is stored: for ``ttl`` seconds, releasing the interactive job's hold, with
    the ``writes`` that go with an applied result; ``taken``: by the worker that took the job
    (its progress mark stays, see ``gate.scripts``)."""

    ttl: Required[int]
    session_id: str | None
    token: int | None
    writes: Sequence[Command]
    taken: bool


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One script invocation: which script, its KEYS and ARGV, and how to read its reply."""

    operation: str
    script: str
    keys: tuple[str, ...]
    args: tuple[Any, ...]
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


class GateCalls:
    """Builds every gate call from settings and ids, and parses the replies (sync and async)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.lease_ms = max(1, round(settings.gate_lease_seconds * 1000))
        self.cap_ms = max(1, round(settings.gate_max_seconds * 1000))
        self.margin_ms = self.lease_ms + _MARGIN_MS
        held_ttl_s = max(settings.result_ttl_seconds, (self.cap_ms + self.margin_ms) / 1000)
        self.held_ttl_ms = round(held_ttl_s * 1000)
        # the session's hash is extended only once it has less than its TTL left: by this much
        self.slack_ms = max(self.held_ttl_ms // 8, self.margin_ms)
        self.templates: tuple[str, ...] = tuple(
            part for key_of in (keys.session, keys.gate_events) for part in _template(key_of)
        )

    def _hold_args(self, sid: str, job: str, hold: Hold | None) -> tuple[Any, ...]:
        """ARGV 1-9 of ``close`` and ``enqueue``: who, whether and how long to hold the gate."""
        _ids(sid, job)
        if hold is None:
            return (sid, job, 0, 0, 0, "", 0, self.held_ttl_ms, self.slack_ms)
        cap = hold.get("cap_seconds")
        if cap is not None and cap <= 0:
            raise InvalidJobError(f"cap_seconds must be positive, got {cap}")
        cap_ms = self.cap_ms if cap is None else max(1, min(self.cap_ms, round(cap * 1000)))
        tool_type = hold.get("tool_type") or ""
        args = (self.lease_ms, cap_ms, tool_type, self.margin_ms, self.held_ttl_ms, self.slack_ms)
        return (sid, job, 1, *args)

    def close(
        self, sid: str, job: str, tool_type: str | None = None, cap_seconds: float | None = None
    ) -> Call[int]:
        """Hold ``sid``'s gate for ``job`` (at most ``cap_seconds``); replies its fence token."""
        args = self._hold_args(sid, job, {"tool_type": tool_type, "cap_seconds": cap_seconds})
        ks = (keys.session(sid), keys.gate_due())
        return Call("close_for", "close", ks, args, int)

    def enqueue(self, job: str, stored: Stored, hold: Hold | None = None) -> Call[int | None]:
        """Store a job (its record, payloads, index fields and other writes) and, with a
        ``hold``, close its session's gate for it, all in one atomic step, unless the job's
        record names another session; replies the fence token (None without a hold).
        ``InvalidJobError`` when the id is taken."""
        sid = stored["session_id"]
        ks: tuple[str, ...] = (keys.job_meta(job), keys.session(sid), keys.gate_due())
        blobs: list[bytes] = []
        for digest, blob in stored["payloads"]:
            ks += (keys.payload(digest), keys.payload_sessions(digest))
            blobs.append(blob)
        record = (stored["record"], stored["record_ttl"], stored["payload_ttl"])
        fields = stored["fields"]
        args = (
            *self._hold_args(sid, job, hold),
            *record,
            len(blobs),
            *blobs,
            len(fields),
            *fields,
            *script_args(stored["writes"]),
        )

        def parse(reply: Any) -> int | None:
            if int(reply) < 0:
                raise InvalidJobError(f"job id {job!r} belongs to another session's job")
            return int(reply) or None

        return Call("enqueue", "enqueue", ks, args, parse)

    def renew(self, sid: str, job: str, token: int) -> Call[bool]:
        """Extend one hold's lease; False when it is lost."""
        renew_all = self.renew_all([(sid, job, token)])
        return Call("renew", "renew", renew_all.keys, renew_all.args, lambda r: r[0] == 1)

    def renew_all(self, holds: Sequence[tuple[str, str, int]]) -> Call[list[bool]]:
        """Extend the leases of ``holds`` (session, job, token each) in one call; each one's
        answer, False for a hold that is lost."""
        ks = tuple(keys.session(sid) for sid, _, _ in holds)
        args = tuple(part for hold in holds for part in hold)
        return Call("renew", "renew", ks, args, lambda reply: [r == 1 for r in reply])

    def release(self, sid: str, job: str, token: int) -> Call[bool]:
        def parse(reply: Any) -> bool:
            if reply == 1:
                return True
            reason = "unknown_job" if reply == 0 else "stale_token"
            _log.warning(
                "gate_release_ignored", session_id=sid, job_id=job, token=token, reason=reason
            )
            return False

        ks = (keys.session(sid), keys.gate_due())
        return Call("release", "release", ks, (sid, job, token, keys.gate_events(sid)), parse)

    def complete(
        self,
        job: str,
        result_json: str,
        ttl: int,
        session_id: str | None = None,
        token: int | None = None,
        writes: Sequence[Command] = (),
        taken: bool = False,
    ) -> Call[CompletionOutcome]:
        """Store ``job``'s result and release its hold (batch: no session, no token); the
        ``writes`` (a run's record) are made with it when it is applied. ``taken``: the caller
        is the worker that took the job, whose progress mark needs no change (anyone else marks
        the job done, so that a worker yet to take it skips it)."""
        sid = session_id
        if (sid is None) != (token is None):
            raise ValueError("complete needs both session_id and token, or neither (batch)")
        if ttl <= 0:
            raise ValueError(f"ttl must be positive, got {ttl}")
        ks: tuple[str, ...] = (keys.job_state(job), keys.result(job), keys.late_result(job))
        args: tuple[Any, ...] = (job, result_json, ttl, "", "", "")
        if sid is not None and token is not None:
            _ids(sid, job)
            ks += (keys.session(sid), keys.gate_due())
            args = (job, result_json, ttl, sid, token, keys.gate_events(sid))
        return Call(
            "complete",
            "complete",
            ks,
            (*args, int(taken), *script_args(writes)),
            lambda reply: CompletionOutcome(_text(reply)),
        )

    def claim(self, limit: int, claim_seconds: float | None) -> Call[list[ExpiredHold]]:
        seconds = self.settings.gate_lease_seconds if claim_seconds is None else claim_seconds
        if limit < 1 or seconds <= 0:
            raise ValueError(
                f"claim needs limit >= 1 and a positive claim lease: {limit}, {seconds}"
            )
        args: tuple[str | int, ...] = (limit, max(1, round(seconds * 1000)), self.margin_ms)
        args += self.templates

        def parse(reply: Any) -> list[ExpiredHold]:
            return [
                ExpiredHold(_text(sid), _text(job), int(token), _text(tool) or None)
                for sid, job, token, tool in reply
            ]

        return Call("claim_expired", "claim", (keys.gate_due(),), args, parse)

    def state(self, sid: str, *, waiting: bool = False) -> Call[tuple[int, int]]:
        """The gate's live holds and ms until the first expires; ``waiting``: the caller is
        subscribed to the gate's events and asks, while the gate is closed, for its opening to
        be announced (a release announces nothing nobody asked for)."""
        args = ("w",) if waiting else ()
        return Call(
            "is_open", "state", (keys.session(sid),), args, lambda r: (int(r[0]), int(r[1]))
        )

    def status(self, sid: str) -> Call[GateStatus]:
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
            jobs.sort(key=lambda j: (j.expires_in_seconds, j.job_id))
            return GateStatus(session_id=sid, open=not jobs, jobs=jobs, held_inputs=held)

        ks = (keys.session(sid), keys.gate_held(sid))
        return Call("status", "status", ks, (), parse)

    def hold(self, sid: str, message: str) -> Call[int]:
        _ids(sid)
        most, room = self.settings.gate_max_held_inputs, self.settings.gate_max_held_bytes
        size = len(message.encode("utf-8", "surrogatepass"))
        if size > room:
            raise HeldInputFullError(f"a message of {size} bytes is over the {room}-byte cap", 413)

        def parse(reply: Any) -> int:
            if reply == -1:
                raise HeldInputFullError(f"the session already holds {most} inputs", 429)
            if reply == -2:
                raise HeldInputFullError(f"the session's held input would pass {room} bytes", 429)
            return int(reply)

        ks = (keys.gate_held(sid), keys.gate_held_bytes(sid))
        return Call("hold_input", "hold", ks, (message, self.held_ttl_ms, most, room), parse)

    def take(self, sid: str) -> Call[list[str]]:
        ks = (keys.session(sid), keys.gate_held(sid), keys.gate_held_bytes(sid))
        return Call("take_held", "take", ks, (), lambda reply: [_text(m) for m in reply])


def _redact(exc: BaseException) -> str:
    # redis URLs may carry a password (redis://user:secret@host); never let one into a message
    return shown_url(f"{type(exc).__name__}: {exc}")


@contextmanager
def unavailable_as_error(operation: str) -> Iterator[None]:
    try:
        yield
    except UNAVAILABLE as exc:
        raise RedisUnavailableError(
            f"gate {operation}: redis unavailable ({_redact(exc)})"
        ) from None


def fail_open(settings: Settings, operation: str, sid: str, exc: BaseException) -> bool:
    if not settings.gate_fail_open:
        raise RedisUnavailableError(
            f"gate {operation}: redis unavailable ({_redact(exc)})"
        ) from None
    _log.error("gate_redis_unavailable", operation=operation, session_id=sid, error=_redact(exc))
    return True


def wait_step(state: tuple[int, int], deadline: float) -> bool | float:
    """True when open, False when out of time, else how long to wait before re-checking."""
    live, next_expiry_ms = state
    if live == 0:
        return True
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    # wake exactly when the earliest hold expires, a lease ending opens the gate unannounced
    return min(remaining, RECHECK_SECONDS, next_expiry_ms / 1000 + 0.001)
