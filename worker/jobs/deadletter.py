"""The dead-letter list: every queue entry a worker refuses, with its reason, in one place.

Whoever refuses an entry (the transport before kombu sees it, Celery's consumer, a task, the
pipeline) calls ``dead_letter``: the entry is logged, counted by reason and kept in the capped
list ``tersify:deadletter`` (newest first), acknowledged and never retried.
"""

from __future__ import annotations

import json
import time

import redis
import structlog

from producer import keys
from producer.contract import DeadLetterReason
from worker.metrics.jobs import DEAD_LETTERS

log = structlog.get_logger("tersify.deadletter")

DEAD_LETTER_KEEP = 1000
"""Records kept in the list; older ones are trimmed."""

EXCERPT_CHARS = 2000


def dead_letter(
    client: redis.Redis,
    reason: DeadLetterReason,
    detail: str,
    entry: object = None,
    *,
    queue: str | None = None,
) -> None:
    """Record a refused entry with its reason; a Redis failure is logged, never raised."""
    detail = detail[:500]
    DEAD_LETTERS.labels(reason.value).inc()
    log.error("entry_dead_lettered", reason=reason.value, detail=detail, queue=queue)
    record = json.dumps(
        {
            "reason": reason.value,
            "detail": detail,
            "queue": queue,
            "message": excerpt(entry),
            "at": time.time(),
        }
    )
    try:
        with client.pipeline(transaction=False) as pipe:
            pipe.lpush(keys.DEAD_LETTERS, record)
            pipe.ltrim(keys.DEAD_LETTERS, 0, DEAD_LETTER_KEEP - 1)
            pipe.execute()
    except (redis.RedisError, OSError) as exc:
        log.error("dead_letter_failed", reason=reason.value, error=type(exc).__name__)


def excerpt(entry: object) -> str | None:
    """The start of an entry as text: raw bytes decoded leniently, anything else as JSON."""
    if entry is None:
        return None
    if isinstance(entry, bytes | bytearray):
        return bytes(entry[: EXCERPT_CHARS * 4]).decode("utf-8", "replace")[:EXCERPT_CHARS]
    if isinstance(entry, str):
        return entry[:EXCERPT_CHARS]
    try:
        return json.dumps(entry, default=str)[:EXCERPT_CHARS]
    except (ValueError, RecursionError):  # a circular or absurdly deep structure
        return repr(entry)[:EXCERPT_CHARS]
