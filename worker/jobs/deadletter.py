"""The dead-letter list: every queue entry a worker refuses, with its reason, in one place.

Whoever refuses an entry (the transport before kombu sees it, Celery's consumer, a task, the
pipeline) calls ``dead_letter``: the entry is logged, counted by reason and kept in the capped
list ``tersify:deadletter`` (newest first), acknowledged and never retried. Each record has an
``id``; a summary job's message is kept whole (``job``) so that ``replay`` can enqueue it again
while its output is still stored. ``tersify deadletters`` reads, replays and purges the list.
"""

from __future__ import annotations

import json
import secrets
import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import redis
import structlog

from tersify.contract import DeadLetterReason, Queue
from tersify.errors import InvalidJobError
from tersify.store import keys, payloads
from tersify.store.wire import parse_message
from tersify.worker.metrics.jobs import DEAD_LETTERS

if TYPE_CHECKING:
    from tersify.client import Producer

log = structlog.get_logger("tersify.deadletter")

DEAD_LETTER_KEEP = 1000
"""Records kept in the list; older ones are trimmed."""

DEAD_LETTER_TTL_SECONDS = 7 * 24 * 3600
"""The list goes this long after its last record (bounded in time as in count)."""

EXCERPT_CHARS = 2000

REPLAY_KEEP_BYTES = 64 * 1024
"""A summary message up to this size is kept whole in its record, for ``replay``."""


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
            "id": secrets.token_hex(6),
            "reason": reason.value,
            "detail": detail,
            "queue": queue,
            "message": excerpt(entry),
            "job": replayable(entry),
            "at": time.time(),
        }
    )
    try:
        with client.pipeline(transaction=False) as pipe:
            pipe.lpush(keys.DEAD_LETTERS, record)
            pipe.ltrim(keys.DEAD_LETTERS, 0, DEAD_LETTER_KEEP - 1)
            pipe.expire(keys.DEAD_LETTERS, DEAD_LETTER_TTL_SECONDS)
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


def replayable(entry: object) -> dict[str, Any] | None:
    """The entry itself when it is a summary message small enough to keep whole, else None."""
    if not isinstance(entry, dict) or "job" not in entry or "payload" not in entry:
        return None
    try:
        size = len(json.dumps(entry, default=str))
    except (ValueError, RecursionError):
        return None
    return entry if size <= REPLAY_KEEP_BYTES else None


@dataclass(frozen=True)
class Record:
    """One record of the list: its stored text (to remove it by) and its fields."""

    raw: bytes
    fields: dict[str, Any]

    @property
    def id(self) -> str | None:
        """The record's id (records written before ids existed have none)."""
        value = self.fields.get("id")
        return value if isinstance(value, str) else None


def records(client: redis.Redis, reason: str | None = None) -> list[Record]:
    """Every record in the list, newest first, optionally only those with ``reason``."""
    found = []
    for raw in client.lrange(keys.DEAD_LETTERS, 0, -1):  # type: ignore[union-attr]
        try:
            fields = json.loads(raw)
        except ValueError:
            continue  # not written by dead_letter
        if isinstance(fields, dict) and (reason is None or fields.get("reason") == reason):
            found.append(Record(raw if isinstance(raw, bytes) else raw.encode(), fields))
    return found


def find(client: redis.Redis, record_id: str) -> Record | None:
    """The record with ``record_id``, or None."""
    return next((r for r in records(client) if r.id == record_id), None)


def purge(client: redis.Redis, chosen: list[Record]) -> int:
    """Remove the ``chosen`` records; how many were still there to remove."""
    if not chosen:
        return 0
    with client.pipeline(transaction=False) as pipe:
        for record in chosen:
            pipe.lrem(keys.DEAD_LETTERS, 1, record.raw)  # type: ignore[arg-type]  # bytes work
        return sum(int(n) for n in pipe.execute())


@dataclass(frozen=True)
class Replayed:
    """What ``replay`` did: the new job's id, or why the record could not be replayed."""

    record_id: str
    job_id: str | None = None
    why_not: str | None = None


def replay(
    client: redis.Redis, producer: Producer, record_id: str, queue: Queue | None = None
) -> Replayed:
    """Enqueue a dead-lettered summary job again, with a new job id, if its output is stored.

    ``client`` must not decode responses (stored outputs are bytes). The record is removed once
    the job is enqueued. ``queue`` overrides the job's own queue.
    """
    record = find(client, record_id)
    if record is None:
        return Replayed(record_id, why_not="no dead letter has this id")
    if not isinstance(record.fields.get("job"), dict):
        return Replayed(record_id, why_not="the record holds no complete summary job message")
    try:
        message = parse_message(record.fields["job"])
    except InvalidJobError as exc:
        return Replayed(record_id, why_not=f"the message breaks the contract: {exc}")
    blob = client.get(keys.payload(message.payload))
    if blob is None:
        return Replayed(record_id, why_not="the job's output is no longer stored")
    job = message.job
    try:
        handle = producer.submit(
            session_id=job.session_id,
            tool_name=job.tool_name,
            output=payloads.decode(blob),
            command=job.command,
            query=job.query,
            tool_call_id=job.tool_call_id,
            relevant_lines=job.relevant_lines,
            queue=queue or job.queue,
            tenant=job.tenant,
            options=job.options,  # its callback, model, budget and caps, as submitted
        )
    except (InvalidJobError, ValueError, TypeError, zlib.error) as exc:
        return Replayed(record_id, why_not=f"the job is invalid: {exc}")
    purge(client, [record])
    log.info("dead_letter_replayed", record_id=record_id, job_id=handle.job_id)
    return Replayed(record_id, job_id=handle.job_id)
