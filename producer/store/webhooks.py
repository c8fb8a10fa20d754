"""Webhooks: a job's result POSTed to its ``callback_url``, signed per Standard Webhooks.

Whoever stores a result (a worker, or a producer cancelling a job) schedules its delivery: the
delivery's JSON under ``keys.webhook(id)`` and its id in the ``keys.WEBHOOKS`` schedule, the
key named in the session's index so that forgetting the session deletes it. A worker's sender
claims due ids atomically into ``keys.WEBHOOKS_INFLIGHT`` with a lease; a claim whose sender
died comes back to the schedule when its lease lapses, so a delivery is POSTed at least once
(receivers de-duplicate on ``webhook-id``).

Every POST is signed as the Standard Webhooks spec says (https://www.standardwebhooks.com/),
with its reference library: ``webhook-id`` (the delivery id, the same on every retry),
``webhook-timestamp`` (Unix seconds) and ``webhook-signature``, ``v1,`` followed by the base64
HMAC-SHA256 of ``"{id}.{timestamp}.{body}"``: the id is signed, so a replay under a new id does
not verify. The key is ``TERSIFY_WEBHOOK_SECRET``: a ``whsec_``-prefixed base64 secret as the
spec writes them, else the secret's UTF-8 bytes. ``verify`` is the receiver's side.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Final

from pydantic import BaseModel, ConfigDict, SecretStr
from standardwebhooks.webhooks import EmptyWebhookSecretError, Webhook

from tersify.contract import SummaryResult
from tersify.store import keys, sessions
from tersify.store.commands import Command, command

ID_HEADER: Final = "webhook-id"
TIMESTAMP_HEADER: Final = "webhook-timestamp"
SIGNATURE_HEADER: Final = "webhook-signature"
DEFAULT_TOLERANCE_SECONDS: Final = 300
_MAX_TIMESTAMP_DIGITS: Final = 12

# KEYS schedule, delivery key, in-flight set · ARGV id, delivery JSON, delay_ms, ttl_s:
# (re)schedule a delivery that long from now and release its claim.
SCHEDULE_SCRIPT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[2], ARGV[2], 'EX', tonumber(ARGV[4]))
redis.call('ZADD', KEYS[1], string.format('%d', now + tonumber(ARGV[3])), ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
"""

# KEYS schedule, delivery key, in-flight set · ARGV id, delivery JSON, delay_ms: schedule a retry
# of a delivery still stored (one forgotten meanwhile is not written again) and release its claim.
RETRY_SCRIPT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', KEYS[3], ARGV[1])
if not redis.call('SET', KEYS[2], ARGV[2], 'XX', 'KEEPTTL') then return 0 end
redis.call('ZADD', KEYS[1], string.format('%d', now + tonumber(ARGV[3])), ARGV[1])
return 1
"""

# KEYS schedule, in-flight set · ARGV most, lease_ms: return lapsed claims to the schedule,
# then claim up to ``most`` due ids, each leased until now + lease_ms.
CLAIM_SCRIPT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', string.format('%d', now))
for _, id in ipairs(lapsed) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZADD', KEYS[1], string.format('%d', now), id)
end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now),
  'LIMIT', 0, tonumber(ARGV[1]))
local lease = string.format('%d', now + tonumber(ARGV[2]))
for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZADD', KEYS[2], lease, id)
end
return due
"""


def _hook(secret: SecretStr) -> Webhook:
    """The Standard Webhooks signer for ``secret`` (see the module)."""
    value = secret.get_secret_value()
    return Webhook(value if value.startswith("whsec_") else value.encode())


def signature(secret: SecretStr, delivery_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value of ``body`` sent as ``delivery_id`` at ``timestamp``."""
    sent = datetime.fromtimestamp(timestamp, UTC)
    return _hook(secret).sign(delivery_id, sent, body.decode())


def headers(
    secret: SecretStr, delivery_id: str, body: bytes, now: float | None = None
) -> dict[str, str]:
    """The headers that sign a POST of ``body`` as delivery ``delivery_id``, sent ``now``."""
    sent = int(time.time() if now is None else now)
    return {
        ID_HEADER: delivery_id,
        TIMESTAMP_HEADER: str(sent),
        SIGNATURE_HEADER: signature(secret, delivery_id, sent, body),
    }


def verify(
    secret: SecretStr,
    body: bytes,
    received: Mapping[str, str],
    *,
    tolerance_seconds: float = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> bool:
    """Whether a received POST is tersify's: its three headers present, a fresh timestamp and a
    signature over its id, timestamp and body. Anything malformed is False, never an error."""
    try:
        lowered = {str(name).lower(): value for name, value in received.items()}
        delivery_id = lowered[ID_HEADER]
        stamp = lowered[TIMESTAMP_HEADER]
        signed = lowered[SIGNATURE_HEADER]
        if not (stamp.isascii() and stamp.isdigit() and len(stamp) <= _MAX_TIMESTAMP_DIGITS):
            return False
        sent = int(stamp)
        if abs((time.time() if now is None else now) - sent) > tolerance_seconds:
            return False
        expected = signature(secret, delivery_id, sent, body).encode()
        return any(hmac.compare_digest(expected, given.encode()) for given in signed.split(" "))
    except (
        KeyError,
        AttributeError,
        TypeError,
        ValueError,
        OverflowError,
        EmptyWebhookSecretError,
    ):
        return False


class Delivery(BaseModel):
    """One webhook delivery: its id, target, the body to POST and the POSTs it has had.

    ``session_id`` and ``since_ms`` (when the job was queued) let the sender drop a delivery of a
    session forgotten after that.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    url: str
    body: str
    attempt: int = 0
    session_id: str = ""
    since_ms: int = 0

    def dump(self) -> str:
        """The delivery as stored under ``keys.webhook(id)``."""
        return self.model_dump_json()


def delivery(url: str, result: SummaryResult) -> Delivery:
    """The first delivery of ``result`` to ``url``."""
    return Delivery(
        id=f"msg_{secrets.token_hex(12)}",
        url=url,
        body=result.model_dump_json(),
        session_id=result.session_id,
        since_ms=int(result.queued_at.timestamp() * 1000),
    )


def schedule(item: Delivery, ttl_seconds: int, delay_seconds: float = 0.0) -> tuple[Command, ...]:
    """The commands that schedule ``item`` ``delay_seconds`` from now and index it under its
    session (kept ``ttl_seconds``, long enough for every retry)."""
    key = keys.webhook(item.id)
    return (
        command(
            "eval",
            SCHEDULE_SCRIPT,
            3,
            keys.WEBHOOKS,
            key,
            keys.WEBHOOKS_INFLIGHT,
            item.id,
            item.dump(),
            str(int(delay_seconds * 1000)),
            str(ttl_seconds),
        ),
        *sessions.index_keys(item.session_id, (key,), ttl_seconds),
    )


def reschedule(item: Delivery, delay_seconds: float) -> Command:
    """The command that retries ``item`` ``delay_seconds`` from now, if it is still stored."""
    delay = str(int(delay_seconds * 1000))
    key = keys.webhook(item.id)
    return command(
        "eval",
        RETRY_SCRIPT,
        3,
        keys.WEBHOOKS,
        key,
        keys.WEBHOOKS_INFLIGHT,
        item.id,
        item.dump(),
        delay,
    )


def finish(delivery_id: str) -> tuple[Command, ...]:
    """The commands that end a delivery (sent, given up or dropped): its claim and its JSON go."""
    return (
        command("zrem", keys.WEBHOOKS_INFLIGHT, delivery_id),
        command("delete", keys.webhook(delivery_id)),
    )
