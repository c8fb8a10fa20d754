"""A global rate limit per provider: token buckets in Redis shared by every worker.

Celery's ``rate_limit`` is per worker; a provider's limits are per account. Two buckets per
provider, requests per minute and tokens per minute, refill continuously and hold at most one
minute's worth. A caller asks for one request and its estimated tokens; the script either takes
them or says how long until they would be there. Interactive jobs wait only while their
deadline allows; batch jobs, whose deadlines are long, simply wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import redis
import structlog

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.store import keys

log = structlog.get_logger("tersify.ratelimit")

# KEYS bucket · ARGV rpm, tpm, cost → milliseconds to wait (0: taken)
_TAKE = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local rpm, tpm, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local ts = tonumber(redis.call('HGET', KEYS[1], 'ts') or now)
local r = tonumber(redis.call('HGET', KEYS[1], 'r') or rpm)
local k = tonumber(redis.call('HGET', KEYS[1], 'k') or tpm)
local dt = math.max(0, now - ts)
if rpm > 0 then r = math.min(rpm, r + dt * rpm / 60000) end
if tpm > 0 then
  cost = math.min(cost, tpm)
  k = math.min(tpm, k + dt * tpm / 60000)
end
local wait = 0
if rpm > 0 and r < 1 then wait = math.max(wait, (1 - r) * 60000 / rpm) end
if tpm > 0 and k < cost then wait = math.max(wait, (cost - k) * 60000 / tpm) end
if wait == 0 then
  if rpm > 0 then r = r - 1 end
  if tpm > 0 then k = k - cost end
end
redis.call('HSET', KEYS[1], 'r', tostring(r), 'k', tostring(k), 'ts', now)
redis.call('PEXPIRE', KEYS[1], 120000)
return math.ceil(wait)
"""


class RateLimiter:
    """The shared request and token budget of one provider (0 for a limit means none)."""

    def __init__(
        self,
        client: redis.Redis,
        provider: str,
        *,
        requests_per_minute: int,
        tokens_per_minute: int,
    ) -> None:
        self.provider = provider
        self._key = keys.rate_bucket(provider)
        self._rpm = requests_per_minute
        self._tpm = tokens_per_minute
        self._take = client.register_script(_TAKE)

    def try_take(self, tokens: int) -> float:
        """Take one request and ``tokens`` now, returning 0.0, or the seconds until possible."""
        try:
            waited = self._take(keys=[self._key], args=[self._rpm, self._tpm, max(0, tokens)])
        except redis.RedisError:
            return 0.0  # without Redis there is no shared budget to honour
        return int(waited) / 1000.0

    def acquire(
        self,
        tokens: int,
        *,
        deadline: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Wait for budget until ``deadline``; ``ProviderError(rate_limited)`` if it won't come."""
        while True:
            wait = self.try_take(tokens)
            if wait == 0.0:
                return
            if clock() + wait > deadline:
                log.info("rate_limit_exhausted", provider=self.provider, wait=round(wait, 3))
                raise ProviderError(
                    FallbackReason.RATE_LIMITED, f"local rate limit: budget in {wait:.1f}s"
                )
            sleep(wait)
