"""A job's result: assembled, stored with its gate release in one step, counted and logged.

Shared by the summary job and the sweeper that finishes jobs whose worker died.
"""

from __future__ import annotations

from datetime import datetime

import structlog

from tersify.contract import PendingSummary, SummaryResult, ToolType, utcnow
from tersify.gate import CompletionOutcome
from tersify.store import webhooks
from tersify.store.commands import Command, execute
from tersify.worker.metrics import jobs as metrics
from tersify.worker.redact import Redactor, leaving
from tersify.worker.runtime.runtime import Runtime
from tersify.worker.summarize.summarizer import Outcome

log = structlog.get_logger("tersify.worker")


def make_result(
    job: PendingSummary, tool_type: ToolType, outcome: Outcome, started: datetime
) -> SummaryResult:
    """Assemble the stored result of a job; a cut output's summary starts by saying so."""
    text = f"{job.cut.notice()}\n{outcome.text}" if job.cut is not None else outcome.text
    return SummaryResult(
        job_id=job.job_id,
        session_id=job.session_id,
        tool_call_id=job.tool_call_id,
        text=text,
        method=outcome.method,
        tool_type=tool_type,
        provider=outcome.provider,
        model=outcome.model,
        chars_in=len(job.output),
        chars_out=len(text),
        input_tokens=outcome.input_tokens,
        output_tokens=outcome.output_tokens,
        fallback_reason=outcome.fallback_reason,
        fallback_detail=outcome.fallback_detail,
        decoded_with_replacement=job.decoded_with_replacement,
        tenant=job.tenant,
        queued_at=job.created_at,
        started_at=started,
        finished_at=utcnow(),
        output_ref=job.output_ref,
        cut=job.cut,
        cost_usd=outcome.cost_usd,
        model_requests=outcome.requests,
        windows=list(outcome.windows),
        unread_lines=list(outcome.unread_lines),
        rerun_of=outcome.rerun_of,
    )


def log_output(rt: Runtime, job: PendingSummary, *, redactor: Redactor | None = None) -> None:
    """Append the full output to the session log; a failing disk degrades, never fails the job."""
    try:
        rt.session_log.append_output(job, redactor=redactor)
    except OSError as exc:
        log.error("session_log_write_failed", error=f"{type(exc).__name__}: {exc.strerror}")


def callback_url(job: PendingSummary | None) -> str | None:
    """Where the job's result is to be POSTed, if anywhere."""
    return job.options.callback_url if job is not None and job.options is not None else None


def store(
    rt: Runtime,
    result: SummaryResult,
    token: int | None,
    redactor: Redactor | None = None,
    callback: str | None = None,
    also: tuple[Command, ...] = (),
    *,
    taken: bool = False,
) -> CompletionOutcome:
    """Store the result, release the job's hold and wake waiters, in one atomic step; the
    commands ``also`` are run in it when the result is the job's (not a late one). ``taken``:
    this worker took the job (its progress mark stays; the sweeper and others mark it done).

    Under ``TERSIFY_REDACT=...,result`` the stored text has the job's placeholders
    (``redactor``, else a fresh one) for its secrets; the redactions are counted here. A
    result that is the job's (not a late one) is then scheduled for its ``callback`` URL.
    """
    redactor = redactor or Redactor(rt.redaction)
    result = leaving(result, redactor)
    completion = rt.gate.complete(
        result.job_id,
        result.model_dump_json(),
        ttl=rt.settings.result_ttl_seconds,
        session_id=result.session_id if token is not None else None,
        token=token,
        writes=also,
        taken=taken,
    )
    if completion is CompletionOutcome.APPLIED:
        metrics.Completions.of(rt.writes).add(result)
    metrics.observe(rt.writes, rt.settings, result, completion, gated=token is not None)
    seconds = (result.finished_at - result.queued_at).total_seconds()
    log.info(
        "summary_completed",
        outcome=completion.value,
        method=result.method.value,
        tool_type=result.tool_type.value,
        provider=result.provider,
        chars_in=result.chars_in,
        chars_out=result.chars_out,
        fallback_reason=result.fallback_reason,
        seconds=round(seconds, 4),
    )
    if completion is CompletionOutcome.APPLIED and callback is not None:
        ttl = rt.settings.result_ttl_seconds
        execute(rt.redis, *webhooks.schedule(webhooks.delivery(callback, result), ttl))
    if completion is CompletionOutcome.APPLIED:
        try:
            rt.session_log.append_result(result, redactor)
        except OSError as exc:
            log.error("session_log_write_failed", error=f"{type(exc).__name__}: {exc.strerror}")
    metrics.count_redactions(redactor.counts)
    return completion
