"""A job's life inside a worker, free of Celery: validate, log, classify, summarize, store.

Every path ends in a stored result or a dead-letter record; nothing half-done stays behind.
"""

from __future__ import annotations

from datetime import datetime

import structlog

from producer import keys, payloads
from producer.classify import classify
from producer.contract import (
    DeadLetterReason,
    FallbackReason,
    PendingSummary,
    SummaryResult,
    ToolType,
    utcnow,
)
from producer.errors import InvalidJobError, ProviderError
from producer.gate import CompletionOutcome
from producer.wire import parse_message, rebuild_job
from worker import metrics
from worker.cache import cache_key
from worker.deadletter import dead_letter
from worker.runtime import Runtime
from worker.summarize import Outcome, fallback, summarize

log = structlog.get_logger("tersify.worker")


def process(raw: object, rt: Runtime) -> SummaryResult | None:
    """Run one broker message to its end; None when it was refused or already done."""
    try:
        message = parse_message(raw)
    except InvalidJobError as exc:
        dead_letter(rt.redis, DeadLetterReason.INVALID_JOB, str(exc), raw)
        return None
    job_id = str(message.job.get("job_id", ""))
    key = None
    if rt.routes and rt.cache.enabled:
        key = cache_key(message.payload, message.job, rt.routes[0].provider.model)
    with rt.redis.pipeline(transaction=False) as pipe:  # one round trip for every read
        pipe.exists(keys.result(job_id))
        pipe.get(keys.payload(message.payload))
        pipe.exists(keys.logged(job_id))
        if key is not None:
            pipe.get(key)
        done, blob, logged, *cached = pipe.execute()
    if done:
        log.info("job_skipped_duplicate", job_id=job_id)
        return None
    if blob is None:
        detail = "the job's output expired before a worker took it"
        dead_letter(rt.redis, DeadLetterReason.PAYLOAD_MISSING, detail, raw)
        return None
    try:
        job = rebuild_job(message, payloads.decode(blob))
    except InvalidJobError as exc:
        dead_letter(rt.redis, DeadLetterReason.INVALID_JOB, str(exc), raw)
        return None
    with (
        structlog.contextvars.bound_contextvars(job_id=job.job_id, session_id=job.session_id),
        rt.leases.holding(job.session_id, job.job_id, message.gate_token),
    ):
        started = utcnow()
        log_output(rt, job, logged=bool(logged))
        tool_type = classify(job.tool_name, job.command, job.output)
        hit = rt.cache.parse(cached[0]) if cached else None
        outcome = hit or summarize_cached(rt, job, tool_type, key)
        result = make_result(job, tool_type, outcome, started)
        store(rt, result, message.gate_token)
        return result


def summarize_cached(
    rt: Runtime, job: PendingSummary, tool_type: ToolType, key: str | None
) -> Outcome:
    """A fresh summary, remembered under ``key`` (when caching) if the model wrote it."""
    try:
        outcome = summarize(job, tool_type, rt.routes, rt.settings)
    except Exception as exc:  # a bug must still end in a result, never a stuck session
        log.exception("summarize_crashed", error=str(exc))
        error = ProviderError(FallbackReason.INTERNAL_ERROR, type(exc).__name__)
        return fallback(job, tool_type, rt.settings, error)
    if key is not None:
        rt.cache.put(key, outcome)
    return outcome


def make_result(
    job: PendingSummary, tool_type: ToolType, outcome: Outcome, started: datetime
) -> SummaryResult:
    """Assemble the stored result of a job."""
    return SummaryResult(
        job_id=job.job_id,
        session_id=job.session_id,
        tool_call_id=job.tool_call_id,
        text=outcome.text,
        method=outcome.method,
        tool_type=tool_type,
        provider=outcome.provider,
        model=outcome.model,
        chars_in=len(job.output),
        chars_out=len(outcome.text),
        input_tokens=outcome.input_tokens,
        output_tokens=outcome.output_tokens,
        fallback_reason=outcome.fallback_reason,
        fallback_detail=outcome.fallback_detail,
        decoded_with_replacement=job.decoded_with_replacement,
        queued_at=job.created_at,
        started_at=started,
        finished_at=utcnow(),
    )


def log_output(rt: Runtime, job: PendingSummary, *, logged: bool | None = None) -> None:
    """Append the full output to the session log; a failing disk degrades, never fails the job."""
    try:
        rt.session_log.append_output(job, logged=logged)
    except OSError as exc:
        log.error("session_log_write_failed", error=f"{type(exc).__name__}: {exc.strerror}")


def store(rt: Runtime, result: SummaryResult, token: int | None) -> CompletionOutcome:
    """Store the result, release the job's hold and wake waiters, in one atomic step."""
    outcome = rt.gate.complete(
        result.job_id,
        result.model_dump_json(),
        ttl=rt.settings.result_ttl_seconds,
        session_id=result.session_id if token is not None else None,
        token=token,
    )
    metrics.observe(rt.writes, rt.settings, result, outcome, gated=token is not None)
    seconds = (result.finished_at - result.queued_at).total_seconds()
    log.info(
        "summary_completed",
        outcome=outcome.value,
        method=result.method.value,
        tool_type=result.tool_type.value,
        provider=result.provider,
        chars_in=result.chars_in,
        chars_out=result.chars_out,
        fallback_reason=result.fallback_reason,
        seconds=round(seconds, 4),
    )
    if outcome is CompletionOutcome.APPLIED:
        try:
            rt.session_log.append_result(result)
        except OSError as exc:
            log.error("session_log_write_failed", error=f"{type(exc).__name__}: {exc.strerror}")
    return outcome
