"""A compaction job's life inside a worker: load the claim-checked job, compact, store."""

from __future__ import annotations

import structlog
from pydantic import ValidationError

from producer import keys, payloads
from producer.compaction import CompactionJob, CompactionResult
from producer.contract import DeadLetterReason
from producer.errors import InvalidJobError
from producer.wire import parse_compaction_message
from worker.compaction.compact import compact
from worker.jobs.deadletter import dead_letter
from worker.metrics import jobs as metrics
from worker.redact import Redactor, Scope
from worker.runtime.runtime import Runtime

log = structlog.get_logger("tersify.compaction")


def process_compaction(raw: object, rt: Runtime) -> CompactionResult | None:
    """Run one compaction message to its end; None when it was refused or already done."""
    try:
        message = parse_compaction_message(raw)
    except InvalidJobError as exc:
        dead_letter(rt.redis, DeadLetterReason.INVALID_JOB, str(exc), raw)
        return None
    result_key = keys.compaction_result(message.job_id)
    if rt.redis.exists(result_key):
        log.info("job_skipped_duplicate", job_id=message.job_id)
        return None
    blob = rt.redis.get(keys.payload(message.payload))
    if blob is None:
        detail = "the compaction job expired before a worker took it"
        dead_letter(rt.redis, DeadLetterReason.PAYLOAD_MISSING, detail, raw)
        return None
    try:
        job = CompactionJob.model_validate_json(payloads.decode(blob))
        redactor = Redactor(Scope.parse(rt.settings.redact))
        timeout = rt.settings.model_timeout_seconds * 2
        result = compact(job, rt.compaction_provider, timeout=timeout, redactor=redactor)
        metrics.count_redactions(redactor.counts)
    except (ValidationError, InvalidJobError) as exc:
        dead_letter(rt.redis, DeadLetterReason.INVALID_JOB, str(exc), raw)
        return None
    store(rt, result)
    return result


# First writer wins: a redelivered job never replaces the result a waiter may already hold.
_STORE_ONCE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""


def store(rt: Runtime, result: CompactionResult) -> bool:
    """Store the result once and wake its waiters; False when one was already stored."""
    key = keys.compaction_result(result.job_id)
    script = rt.redis.register_script(_STORE_ONCE)
    stored = bool(
        script(keys=[key], args=[result.model_dump_json(), rt.settings.result_ttl_seconds])
    )
    log.info(
        "compaction_completed",
        job_id=result.job_id,
        session_id=result.session_id,
        stored=stored,
        method=result.method.value,
        fallback_reason=result.fallback_reason,
        messages_before=result.messages_before,
        messages_after=result.messages_after,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
    )
    return stored
