"""A compaction job's life inside a worker: load the claim-checked job, log its messages,
compact it under the summaries' model-call policy, store the result and the session's summary.
"""

from __future__ import annotations

from typing import cast

import structlog
from pydantic import ValidationError

from tersify.chat.compaction import CompactionJob, CompactionResult
from tersify.contract import DeadLetterReason
from tersify.errors import InvalidJobError
from tersify.store import keys, payloads
from tersify.store.wire import parse_compaction_message
from tersify.worker.compaction.compact import compact
from tersify.worker.jobs.deadletter import dead_letter
from tersify.worker.metrics.jobs import count_redactions, observe_compaction
from tersify.worker.model.providers.base import ModelRequest
from tersify.worker.redact import Redactor
from tersify.worker.runtime.runtime import Runtime
from tersify.worker.summarize.grounding import Source, check_source

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
    except (ValidationError, InvalidJobError) as exc:
        dead_letter(rt.redis, DeadLetterReason.INVALID_JOB, str(exc), raw)
        return None
    with structlog.contextvars.bound_contextvars(job_id=job.job_id, session_id=job.session_id):
        try:
            result = _run(rt, job)
        except InvalidJobError as exc:
            dead_letter(rt.redis, DeadLetterReason.INVALID_JOB, str(exc), raw)
            return None
        store(rt, result)
    return result


def _run(rt: Runtime, job: CompactionJob) -> CompactionResult:
    """Log the job's messages, then compact them with the session's last summary at hand."""
    settings = rt.settings
    redactor = Redactor(rt.redaction)
    try:
        rt.session_log.append_compaction(job, redactor)
    except OSError as exc:  # a full disk must not cost the user the compaction
        log.warning("session_log_write_failed", error=str(exc))
    stored: bytes | None = None
    if not job.previous_summary:
        stored = cast("bytes | None", rt.redis.get(keys.compaction_summary(job.session_id)))

    def ground(text: str, request: ModelRequest) -> None:
        check_source(text, Source.of(request.system, request.user), settings)

    result = compact(
        job,
        rt.compaction_routes,
        settings,
        stored_summary=stored.decode("utf-8", "replace") if stored else None,
        ground=ground,
        redactor=redactor,
    )
    count_redactions(redactor.counts)
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
    settings = rt.settings
    key = keys.compaction_result(result.job_id)
    script = rt.redis.register_script(_STORE_ONCE)
    with rt.redis.pipeline(transaction=False) as pipe:
        script(
            keys=[key], args=[result.model_dump_json(), settings.result_ttl_seconds], client=pipe
        )
        ttl = settings.compaction_summary_ttl_seconds
        if result.summary and ttl:
            pipe.set(keys.compaction_summary(result.session_id), result.summary, ex=ttl)
        stored = bool(pipe.execute()[0])
    observe_compaction(rt.writes, settings, result)
    log.info(
        "compaction_completed",
        stored=stored,
        method=result.method.value,
        provider=result.provider,
        fallback_reason=result.fallback_reason,
        passthrough_reason=result.passthrough_reason,
        messages_before=result.messages_before,
        messages_after=result.messages_after,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
    )
    return stored
