"""The Redis-backed session gate: while a job for a session runs, the user's next input waits.

Each live job holds the gate of its session with a lease (renewed by its worker, never past a
cap) and a fencing token. The gate is open when no hold is live; a lease that is not renewed
opens the gate by itself when it expires. A sweeper (``claim_expired``) finishes abandoned jobs
with a fresh token so a slow worker's result arrives LATE instead of being applied twice.
Batch jobs never touch the gate: callers simply do not call ``close_for`` for them.

``SessionGate`` (blocking redis-py) and ``AsyncSessionGate`` (``redis.asyncio``) share the Lua
(``gate.scripts``) and the argument building and reply parsing (``gate.protocol``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Unpack

import redis
import redis.asyncio

from tersify.gate.protocol import (
    RECHECK_SECONDS,
    UNAVAILABLE,
    Call,
    Completion,
    CompletionOutcome,
    ExpiredHold,
    GateCalls,
    GateStatus,
    Hold,
    T,
    fail_open,
    unavailable_as_error,
    wait_step,
)
from tersify.gate.scripts import SOURCES
from tersify.settings import Settings
from tersify.store import keys

# How often a waiter that could not subscribe re-reads the gate.
_POLL_SECONDS = 0.25


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
        self.calls = GateCalls(settings)
        self._scripts = {name: client.register_script(src) for name, src in SOURCES.items()}

    def run(self, call: Call[T]) -> T:
        """Send one gate script call and parse its reply."""
        with unavailable_as_error(call.operation):
            reply = self._scripts[call.script](keys=call.keys, args=call.args)
        return call.parse(reply)

    def close_for(self, session_id: str, job_id: str, **hold: Unpack[Hold]) -> int:
        """Hold the session's gate for ``job_id`` before publishing it; returns its fence token."""
        return self.run(self.calls.close(session_id, job_id, **hold))

    def reopen_for(self, session_id: str, job_id: str, token: int) -> bool:
        """Drop the hold taken by ``close_for`` when publishing the job failed."""
        return self.release(session_id, job_id, token)

    def renew(self, session_id: str, job_id: str, token: int) -> bool:
        """Extend the lease by ``gate_lease_seconds`` (never past the cap); False: hold lost."""
        return self.run(self.calls.renew(session_id, job_id, token))

    def renew_all(self, holds: Sequence[tuple[str, str, int]]) -> list[bool]:
        """``renew`` for many holds (session, job, token each) in one call; each one's answer."""
        return self.run(self.calls.renew_all(holds)) if holds else []

    def release(self, session_id: str, job_id: str, token: int) -> bool:
        """Remove the hold if ``token`` still owns it; otherwise log and return False."""
        return self.run(self.calls.release(session_id, job_id, token))

    def complete(
        self, job_id: str, result_json: str, **how: Unpack[Completion]
    ) -> CompletionOutcome:
        """Store a result and release its hold atomically (batch: no session/token); LATE aside."""
        return self.run(self.calls.complete(job_id, result_json, **how))

    def claim_expired(
        self, limit: int = 100, *, claim_seconds: float | None = None
    ) -> list[ExpiredHold]:
        """Take over up to ``limit`` expired holds (and stale claims) for this sweeper to finish."""
        return self.run(self.calls.claim(limit, claim_seconds))

    def is_open(self, session_id: str) -> bool:
        """True when no live hold keeps the session's gate closed (see the class on outages)."""
        try:
            return self._state(session_id)[0] == 0
        except UNAVAILABLE as exc:
            return fail_open(self._settings, "is_open", session_id, exc)

    def status(self, session_id: str) -> GateStatus:
        """The session's gate, its live holds and how much input is held."""
        return self.run(self.calls.status(session_id))

    def wait_open(self, session_id: str, timeout: float) -> bool:
        """Block until the gate is open (True) or ``timeout`` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        try:
            # redis-py leaves the blocking client's pubsub() unannotated
            with self._client.pubsub() as pubsub:  # type: ignore[no-untyped-call]
                # subscribe before looking (the look asks for the opening to be announced), so
                # an opening between the two is never missed
                pubsub.subscribe(keys.gate_events(session_id))
                pubsub.get_message(timeout=max(0.0, min(timeout, RECHECK_SECONDS)))
                while True:
                    step = wait_step(self._state(session_id, waiting=True), deadline)
                    if isinstance(step, bool):
                        return step
                    pubsub.get_message(timeout=step)
        except UNAVAILABLE as exc:
            return fail_open(self._settings, "wait_open", session_id, exc)

    def hold_input(self, session_id: str, message: str) -> int:
        """Queue user input that arrived while the gate was closed; returns the queue length."""
        return self.run(self.calls.hold(session_id, message))

    def take_held(self, session_id: str) -> list[str]:
        """All held input, oldest first, removed atomically; [] while the gate is closed."""
        return self.run(self.calls.take(session_id))

    def _state(self, session_id: str, *, waiting: bool = False) -> tuple[int, int]:
        call = self.calls.state(session_id, waiting=waiting)
        return call.parse(self._scripts[call.script](keys=call.keys, args=call.args))


class AsyncSessionGate:
    """The session gate over ``redis.asyncio``: ``SessionGate``'s methods, as coroutines.

    Outages behave as in ``SessionGate``: ``RedisUnavailableError``, except that ``is_open``
    and ``wait_open`` report open (logged at error level) while ``gate_fail_open`` is set.
    """

    def __init__(self, client: redis.asyncio.Redis, settings: Settings) -> None:
        self._client = client
        self._settings = settings
        self.calls = GateCalls(settings)
        self._scripts = {name: client.register_script(src) for name, src in SOURCES.items()}
        # A waiter holds a subscribed connection: at most half the pool, the rest poll.
        self._subscribers = asyncio.Semaphore(max(1, settings.redis_pool_size // 2))

    async def run(self, call: Call[T]) -> T:
        """Send one gate script call and parse its reply."""
        with unavailable_as_error(call.operation):
            reply = await self._scripts[call.script](keys=call.keys, args=call.args)
        return call.parse(reply)

    async def close_for(self, session_id: str, job_id: str, **hold: Unpack[Hold]) -> int:
        """Hold the session's gate for ``job_id`` before publishing it; returns its fence token."""
        return await self.run(self.calls.close(session_id, job_id, **hold))

    async def reopen_for(self, session_id: str, job_id: str, token: int) -> bool:
        """Drop the hold taken by ``close_for`` when publishing the job failed."""
        return await self.release(session_id, job_id, token)

    async def renew(self, session_id: str, job_id: str, token: int) -> bool:
        """Extend the lease by ``gate_lease_seconds`` (never past the cap); False: hold lost."""
        return await self.run(self.calls.renew(session_id, job_id, token))

    async def release(self, session_id: str, job_id: str, token: int) -> bool:
        """Remove the hold if ``token`` still owns it; otherwise log and return False."""
        return await self.run(self.calls.release(session_id, job_id, token))

    async def complete(
        self, job_id: str, result_json: str, **how: Unpack[Completion]
    ) -> CompletionOutcome:
        """Store a result and release its hold atomically (batch: no session/token); LATE aside."""
        return await self.run(self.calls.complete(job_id, result_json, **how))

    async def claim_expired(
        self, limit: int = 100, *, claim_seconds: float | None = None
    ) -> list[ExpiredHold]:
        """Take over up to ``limit`` expired holds (and stale claims) for this sweeper to finish."""
        return await self.run(self.calls.claim(limit, claim_seconds))

    async def is_open(self, session_id: str) -> bool:
        """True when no live hold keeps the session's gate closed (see the class on outages)."""
        try:
            return (await self._state(session_id))[0] == 0
        except UNAVAILABLE as exc:
            return fail_open(self._settings, "is_open", session_id, exc)

    async def status(self, session_id: str) -> GateStatus:
        """The session's gate, its live holds and how much input is held."""
        return await self.run(self.calls.status(session_id))

    async def wait_open(self, session_id: str, timeout: float) -> bool:
        """Wait until the gate is open (True) or ``timeout`` seconds pass (False).

        A waiter subscribes to the session's gate events (woken the moment the gate opens)
        while half the client's connections or fewer are subscribed; past that, it re-reads
        the gate every 0.25 s instead, so waiters never take the connections that submits and
        reads need.
        """
        deadline = time.monotonic() + timeout
        try:
            if self._subscribers.locked():
                while True:
                    step = wait_step(await self._state(session_id), deadline)
                    if isinstance(step, bool):
                        return step
                    await asyncio.sleep(min(step, _POLL_SECONDS))
            async with self._subscribers, self._client.pubsub() as pubsub:
                await pubsub.subscribe(keys.gate_events(session_id))
                await pubsub.get_message(timeout=max(0.0, min(timeout, RECHECK_SECONDS)))
                while True:
                    step = wait_step(await self._state(session_id, waiting=True), deadline)
                    if isinstance(step, bool):
                        return step
                    await pubsub.get_message(timeout=step)
        except UNAVAILABLE as exc:
            return fail_open(self._settings, "wait_open", session_id, exc)

    async def hold_input(self, session_id: str, message: str) -> int:
        """Queue user input that arrived while the gate was closed; returns the queue length."""
        return await self.run(self.calls.hold(session_id, message))

    async def take_held(self, session_id: str) -> list[str]:
        """All held input, oldest first, removed atomically; [] while the gate is closed."""
        return await self.run(self.calls.take(session_id))

    async def _state(self, session_id: str, *, waiting: bool = False) -> tuple[int, int]:
        call = self.calls.state(session_id, waiting=waiting)
        return call.parse(await self._scripts[call.script](keys=call.keys, args=call.args))
