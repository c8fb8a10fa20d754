"""Passthrough outputs into the session log: producers queue them, any worker writes them.

A passthrough never reaches a worker as a job, so the producer queues its job id, with the
output and its result stored beside it (``tersify.store.passthroughs``: bounded in bytes, with
a TTL); when ``TERSIFY_KEEP_READ_LINES`` is on, the lines an agent read back from a summarized
output wait the same way (``{"reread": {...}}``). A worker's chore takes a batch of ids
atomically into the ``inflight`` set, appends each entry to its session's log (the output once
per job id, as for jobs), then releases them; a batch left in flight by a worker that died is
returned to the list after ``STALE_SECONDS`` and written again, which readers de-duplicate by
``(kind, job_id)`` (and a read's ``read_id``). An entry whose session was forgotten after it
was made (the entry deleted, or the session's tombstone newer) is never written.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any

import redis
import structlog
from pydantic import ValidationError

from tersify.contract import PendingSummary, SummaryResult, utcnow
from tersify.store import keys, passthroughs, sessions
from tersify.store.commands import execute
from tersify.worker.store.sessionlog import SessionLog

log = structlog.get_logger("tersify.sessionlog")

BATCH = 200
STALE_SECONDS = 60.0

# KEYS: pending list, in-flight zset. ARGV: now (ms), batch size, stale age (ms).
_TAKE = """
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1] - ARGV[3], 'LIMIT', 0, ARGV[2])
for _, entry in ipairs(stale) do
  redis.call('ZREM', KEYS[2], entry)
  redis.call('RPUSH', KEYS[1], entry)
end
local taken = redis.call('RPOP', KEYS[1], ARGV[2])
if not taken then return {} end
for _, entry in ipairs(taken) do redis.call('ZADD', KEYS[2], ARGV[1], entry) end
return taken
"""


class PassthroughLog:
    """Moves queued passthrough outputs into the session log, a batch at a time."""

    def __init__(self, client: redis.Redis, session_log: SessionLog) -> None:
        self._redis = client
        self._log = session_log
        self._take = client.register_script(_TAKE)

    def drain(self, rounds: int = 10) -> int:
        """Write up to ``rounds`` batches; how many entries were written.

        A failing disk (``OSError``) stops the round with its batch left in flight: it is
        written again once stale.
        """
        written = 0
        for _ in range(rounds):
            now_ms = int(time.time() * 1000)
            batch = self._take(
                keys=[keys.PASSTHROUGH_LOG, keys.PASSTHROUGH_LOGGING],
                args=[now_ms, BATCH, int(STALE_SECONDS * 1000)],
            )
            if not batch:
                break
            ids = [i.decode() if isinstance(i, bytes) else str(i) for i in batch]
            entries: Any = self._redis.mget([keys.passthrough_entry(i) for i in ids])
            written += sum(self._write(entry) for entry in entries)
            execute(self._redis, passthroughs.done(ids))
        return written

    def _write(self, entry: bytes | None) -> bool:
        """Write one entry to its session's log; False when it is gone, invalid or forgotten."""
        if entry is None:
            return False  # forgotten, or expired while no worker drained
        try:
            record = json.loads(entry)
            if isinstance(record, dict) and isinstance(record.get("reread"), dict):
                return self._write_reread(record["reread"])
            job = PendingSummary.model_validate(record["job"])
            result = SummaryResult.model_validate({"text": job.output, **record["result"]})
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            log.error("passthrough_log_entry_invalid", error=type(exc).__name__)
            return False
        tombstone = self._redis.get(keys.forgotten(job.session_id))
        if sessions.dropped(tombstone, int(job.created_at.timestamp() * 1000)):
            return False
        self._log.append_output(job)  # once per job id
        self._log.append_result(result)  # again only after a crash; readers de-duplicate
        return True

    def _write_reread(self, reread: dict[str, object]) -> bool:
        """Write the lines one read gave back; False when invalid or the session is forgotten."""
        session, at = reread.get("session_id"), reread.get("at")
        if not isinstance(session, str) or not isinstance(reread.get("lines"), list):
            log.error("reread_log_entry_invalid")
            return False
        read_at = datetime.fromisoformat(at) if isinstance(at, str) else utcnow()
        tombstone = self._redis.get(keys.forgotten(session))
        if sessions.dropped(tombstone, int(read_at.timestamp() * 1000)):
            return False
        self._log.append_reread(reread)
        return True
