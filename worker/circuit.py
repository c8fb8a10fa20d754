"""A circuit breaker per provider, shared by every worker through Redis.

Closed: calls go through; consecutive outage-like failures (timeouts, connection errors, 5xx)
are counted and a success resets the count. After ``threshold`` of them the circuit opens: for
``cooldown`` seconds every job skips the model and falls back at once (reason
``circuit_open``) instead of waiting on a dead API. Then exactly one caller gets a probe (a
short lease, so a probe whose worker died is handed out again); its success closes the circuit,
its failure opens it for another cool-down. One Lua script per transition, server time only.
"""

from __future__ import annotations

from enum import StrEnum

import redis
import structlog

from producer import keys
from producer.contract import FallbackReason

log = structlog.get_logger("tersify.circuit")

OUTAGE_REASONS = frozenset(
    {FallbackReason.TIMEOUT, FallbackReason.CONNECTION_ERROR, FallbackReason.SERVER_ERROR}
)

# KEYS circuit · ARGV cooldown_ms, probe_ms → "allow" | "probe" | "reject"
_ADMIT = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local state = redis.call('HGET', KEYS[1], 'state')
if not state or state == 'closed' then return 'allow' end
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


class Admission(StrEnum):
    """What the breaker says about one call."""

    ALLOW = "allow"
    PROBE = "probe"
    REJECT = "reject"


class CircuitBreaker:
    """The shared breaker of one provider."""

    def __init__(
        self, client: redis.Redis, provider: str, *, threshold: int, cooldown: float, probe: float
    ) -> None:
        self.provider = provider
        self._key = keys.circuit(provider)
        self._threshold = threshold
        self._cooldown_ms = int(cooldown * 1000)
        self._probe_ms = int(probe * 1000)
        self._ttl = max(60, int(cooldown * 10))
        self._admit = client.register_script(_ADMIT)
        self._record = client.register_script(_RECORD)

    def admit(self) -> Admission:
        """May a call go out now? Redis being unreachable admits (the call will tell)."""
        try:
            reply = self._admit(keys=[self._key], args=[self._cooldown_ms, self._probe_ms])
        except redis.RedisError:
            return Admission.ALLOW
        return Admission(reply.decode() if isinstance(reply, bytes) else str(reply))

    def record(self, *, ok: bool, probe: bool, reason: FallbackReason | None = None) -> None:
        """Count a call's outcome; only outage-like failures count against the circuit."""
        if not ok and reason not in OUTAGE_REASONS:
            ok = True  # a 4xx or a bad answer still proves the API is up
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
