"""A circuit breaker per provider, shared by every worker through Redis.

Closed: calls go through; consecutive outage-like failures (timeouts, connection errors, 5xx)
are counted and a success resets the count. After ``threshold`` of them the circuit opens: for
``cooldown`` seconds every job skips the model and falls back at once (reason
``circuit_open``) instead of waiting on a dead API. Then exactly one caller gets a probe (a
short lease, so a probe whose worker died is handed out again); its success closes the circuit,
its failure opens it for another cool-down. One Lua script per transition, server time only.

Three shortcuts keep the breaker off a healthy job's path. An "allow" is remembered in-process
for ``ALLOW_CACHE_SECONDS``; once it ran out, one thread asks Redis while the others go on
trusting it for that round trip (so a circuit opened by another worker is seen that much later
here, and one look more; a failure recorded here forgets the allow at once). An ordinary
success's reset is written behind the job when a ``WriteBehind`` is given, once per batch of
writes however many successes (a probe's verdict is always written at once). And it is written
only when there is a count to clear: a failure recorded here since the last reset, or one the
last look at the circuit (at most ``ALLOW_CACHE_SECONDS`` old) found counted. A late reset only
clears the count of a circuit that is still closed: it may forget a failure recorded in the
same ~20 ms, but it never closes a circuit; a failure another worker counted after this one's
last look outlives this one's successes until its next look (``ALLOW_CACHE_SECONDS``) at most.
"""

from __future__ import annotations

import threading
import time
from enum import StrEnum
from typing import Any

import redis
import structlog

from tersify.contract import FallbackReason
from tersify.store import keys
from tersify.worker.store.writebehind import WriteBehind

log = structlog.get_logger("tersify.circuit")

ALLOW_CACHE_SECONDS = 0.1

OUTAGE_REASONS = frozenset(
    {FallbackReason.TIMEOUT, FallbackReason.CONNECTION_ERROR, FallbackReason.SERVER_ERROR}
)

# KEYS circuit · ARGV cooldown_ms, probe_ms → "allow" | "counted" (allow, with failures
# counted) | "probe" | "reject"
_ADMIT = """
local got = redis.call('HMGET', KEYS[1], 'state', 'failures')
local state = got[1]
if not state or state == 'closed' then
  if got[2] then return 'counted' end
  return 'allow'
end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local until_ms = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if now < until_ms then return 'reject' end
redis.call('HSET', KEYS[1], 'state', 'probing', 'until', now + tonumber(ARGV[2]))
return 'probe'
"""

# KEYS circuit · ARGV ok(1|0), probe(1|0), threshold, cooldown_ms, ttl_s → new state
_RECORD = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
if ARGV[1] == '1' then
  redis.call('DEL', KEYS[1])
  return 'closed'
end
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
if ARGV[2] == '1' or (state == 'closed' and failures >= tonumber(ARGV[3])) then
  redis.call('HSET', KEYS[1], 'state', 'open', 'until', now + tonumber(ARGV[4]))
  state = 'open'
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
return state
"""


# KEYS circuit → reset the failure count of a closed circuit; an open or probing one is left
# alone, so a reset written late can never close what a later failure opened.
_RESET_IF_CLOSED = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state or state == 'closed' then redis.call('DEL', KEYS[1]) end
return 1
"""


class Admission(StrEnum):
    """What the breaker says about one call."""

    ALLOW = "allow"
    PROBE = "probe"
    REJECT = "reject"


class CircuitBreaker:
    """The shared breaker of one provider."""

    def __init__(
        self,
        client: redis.Redis,
        provider: str,
        *,
        threshold: int,
        cooldown: float,
        probe: float,
        writes: WriteBehind | None = None,
    ) -> None:
        self.provider = provider
        self._writes = writes
        self._allowed_until = 0.0  # monotonic; an "allow" seen here is trusted until then
        self._looking = threading.Lock()  # held by the thread asking Redis
        self._reset_queued = False
        self._counted = False  # failures may be counted: a success has a reset to write
        self._key = keys.circuit(provider)
        self._threshold = threshold
        self._cooldown_ms = int(cooldown * 1000)
        self._probe_ms = int(probe * 1000)
        self._ttl = max(60, int(cooldown * 10))
        self._admit = client.register_script(_ADMIT)
        self._record = client.register_script(_RECORD)

    def _queue_reset(self, pipe: Any) -> None:
        self._reset_queued = False
        # EVAL, not EVALSHA: a pipeline with scripts costs an extra round trip
        pipe.eval(_RESET_IF_CLOSED, 1, self._key)

    def admit(self) -> Admission:
        """May a call go out now? Redis being unreachable admits (the call will tell)."""
        now = time.monotonic()
        if now < self._allowed_until:
            return Admission.ALLOW
        if not self._looking.acquire(blocking=False):
            if now < self._allowed_until + ALLOW_CACHE_SECONDS:
                return Admission.ALLOW  # the allow that just ran out, while another thread looks
            return self._look(now)
        try:
            return self._look(now)
        finally:
            self._looking.release()

    def _look(self, now: float) -> Admission:
        """Ask Redis (the admit script) and remember an allow."""
        try:
            reply = self._admit(keys=[self._key], args=[self._cooldown_ms, self._probe_ms])
        except redis.RedisError:
            return Admission.ALLOW
        answer = reply.decode() if isinstance(reply, bytes) else str(reply)
        if answer == "counted":
            self._counted, answer = True, Admission.ALLOW.value
        admission = Admission(answer)
        if admission is Admission.ALLOW:
            self._allowed_until = now + ALLOW_CACHE_SECONDS
        return admission

    def record(self, *, ok: bool, probe: bool, reason: FallbackReason | None = None) -> None:
        """Count a call's outcome; only outage-like failures count against the circuit."""
        if not ok and reason not in OUTAGE_REASONS:
            ok = True  # a 4xx or a bad answer still proves the API is up
        if not ok:
            self._allowed_until = 0.0
            self._counted = True
        elif not probe and self._writes is not None:
            # one reset per batch of writes, however many successes; none with nothing counted
            if self._counted and not self._reset_queued:
                self._counted, self._reset_queued = False, True
                self._writes.submit(self._queue_reset)
            return
        args = [int(ok), int(probe), self._threshold, self._cooldown_ms, self._ttl]
        try:
            state = self._record(keys=[self._key], args=args)
        except redis.RedisError:
            return
        state = state.decode() if isinstance(state, bytes) else str(state)
        if state == "open" and not ok:
            log.warning("circuit_opened", provider=self.provider, reason=reason)
        elif state == "closed" and probe:
            log.info("circuit_closed", provider=self.provider)
