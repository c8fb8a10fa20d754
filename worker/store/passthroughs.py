"""Passthrough outputs into the session log: producers queue them, any worker writes them.

A passthrough never reaches a worker as a job, so the producer pushes the output and its result
onto ``tersify:sessionlog:pending``. A worker's chore takes a batch atomically into the
``inflight`` set, appends each to its session's log (the output once per job id, as for jobs),
then removes them; a batch left in flight by a worker that died is returned to the list after
``STALE_SECONDS`` and written again, which readers de-duplicate by ``(kind, job_id)``.
"""

from __future__ import annotations

import json
import time

import redis
import structlog
from pydantic import ValidationError

from tersify.contract import PendingSummary, SummaryResult
from tersify.store import keys
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
            for entry in batch:
                self._write(entry)
            self._redis.zrem(keys.PASSTHROUGH_LOGGING, *batch)
            written += len(batch)
        return written

    def _write(self, entry: bytes) -> None:
        try:
            record = json.loads(entry)
            job = PendingSummary.model_validate(record["job"])
            result = SummaryResult.model_validate(record["result"])
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            log.error("passthrough_log_entry_invalid", error=type(exc).__name__)
            return
        self._log.append_output(job)  # once per job id
        self._log.append_result(result)  # again only after a crash; readers de-duplicate
