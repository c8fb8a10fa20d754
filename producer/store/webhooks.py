"""Webhooks: a job's result POSTed once to its ``callback_url``, signed, retried with backoff.

Whoever stores a result (a worker, or a producer cancelling a job) schedules its delivery in
``keys.WEBHOOKS``; a worker's sender thread claims due deliveries atomically (so each one is
POSTed by one worker) and POSTs them, never on a job's slot.

Every POST carries ``X-Tersify-Timestamp`` (Unix seconds) and ``X-Tersify-Signature``,
``v1=`` followed by the hex HMAC-SHA256 of ``"{timestamp}." + body`` under
``TERSIFY_WEBHOOK_SECRET``. A receiver recomputes it with ``verify`` and refuses stale
timestamps, which defeats replays.
"""

from __future__ import annotations

import hmac
import secrets
import time
from typing import Final

from pydantic import BaseModel, ConfigDict, SecretStr

from tersify.contract import SummaryResult
from tersify.store import keys
from tersify.store.commands import Command, command

SIGNATURE_HEADER: Final = "X-Tersify-Signature"
TIMESTAMP_HEADER: Final = "X-Tersify-Timestamp"
DELIVERY_HEADER: Final = "X-Tersify-Delivery"
DEFAULT_TOLERANCE_SECONDS: Final = 300

# KEYS webhooks · ARGV delivery JSON, delay_ms: schedule a delivery that long from now.
SCHEDULE_SCRIPT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], string.format('%d', now + tonumber(ARGV[2])), ARGV[1])
return 1
"""

# KEYS webhooks · ARGV most: take up to ``most`` due deliveries off the set, atomically.
CLAIM_SCRIPT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now),
  'LIMIT', 0, tonumber(ARGV[1]))
for _, member in ipairs(due) do redis.call('ZREM', KEYS[1], member) end
return due
"""


def signature(secret: SecretStr, timestamp: int, body: bytes) -> str:
    """The ``X-Tersify-Signature`` value of ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.get_secret_value().encode(), f"{timestamp}.".encode() + body, "sha256")
    return f"v1={mac.hexdigest()}"


def verify(
    secret: SecretStr,
    timestamp: str,
    signed: str,
    body: bytes,
    *,
    tolerance_seconds: float = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> bool:
    """Whether a received POST is tersify's: a fresh timestamp and a matching signature."""
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - sent) > tolerance_seconds:
        return False
    return hmac.compare_digest(signature(secret, sent, body), signed)


def delivery(url: str, result: SummaryResult) -> str:
    """The stored form of a result's first delivery (see ``Delivery``)."""
    return Delivery(id=secrets.token_hex(8), url=url, body=result.model_dump_json()).dump()


class Delivery(BaseModel):
    """One webhook delivery: its id, target, the body to POST and the POSTs it has had."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    url: str
    body: str
    attempt: int = 0

    def dump(self) -> str:
        """The delivery as stored in ``keys.WEBHOOKS``."""
        return self.model_dump_json()


def schedule(member: str, delay_seconds: float = 0.0) -> Command:
    """The command that schedules a delivery ``delay_seconds`` from now."""
    return command(
        "eval", SCHEDULE_SCRIPT, 1, keys.WEBHOOKS, member, str(int(delay_seconds * 1000))
    )
