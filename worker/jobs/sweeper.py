"""Finish jobs whose gate lease ran out (their worker died or froze) with the fallback result.

Runs on every worker's scheduler thread; ``claim_expired`` hands each expired hold to exactly
one sweeper, with a fresh fencing token so the original worker's result, should it still
arrive, is stored as late instead of applied twice.
"""

from __future__ import annotations

import structlog

from tersify.contract import (
    FallbackReason,
    Method,
    PendingSummary,
    SummaryResult,
    ToolType,
    utcnow,
)
from tersify.errors import InvalidJobError, ProviderError
from tersify.gate import ExpiredHold
from tersify.store import keys, payloads, records
from tersify.store.commands import command, execute
from tersify.worker.jobs.results import callback_url, log_output, make_result, store
from tersify.worker.runtime.runtime import Runtime
from tersify.worker.summarize.summarizer import fallback_outcome

log = structlog.get_logger("tersify.sweeper")
_TYPES = {t.value for t in ToolType}


def sweep_once(rt: Runtime, limit: int = 100) -> int:
    """Claim expired holds and finish their jobs; return how many were finished."""
    finished = 0
    for hold in rt.gate.claim_expired(limit=limit):
        if finish_expired(rt, hold):
            finished += 1
    return finished


def finish_expired(rt: Runtime, hold: ExpiredHold) -> bool:
    """Store the fallback result for one expired hold; True when it had its output to shrink."""
    job, taken = _rebuild(rt, hold)
    started = utcnow()
    error = _why(rt, taken)
    tool_type = ToolType(hold.tool_type) if hold.tool_type in _TYPES else ToolType.COMMAND_OUTPUT
    if job is None:
        # The output is gone (its TTL passed): the waiter still gets an answer saying so.
        now = utcnow()
        result = SummaryResult(
            job_id=hold.job_id,
            session_id=hold.session_id,
            text="[tersify: this job's output expired before it could be summarized]",
            method=Method.FALLBACK,
            tool_type=tool_type,
            chars_in=0,
            chars_out=0,
            fallback_reason=error.reason,
            fallback_detail="output unavailable",
            queued_at=now,
            started_at=now,
            finished_at=now,
        )
    else:
        log_output(rt, job)
        result = make_result(
            job, tool_type, fallback_outcome(job, tool_type, rt.settings, error), started
        )
    outcome = store(rt, result, hold.token, callback=callback_url(job))
    log.warning("expired_job_finished", job_id=hold.job_id, outcome=outcome.value)
    return job is not None


def _why(rt: Runtime, taken: bool) -> ProviderError:
    """A job a worker took lost its lease; one no worker took waited out its hold in the queue."""
    if taken:
        return ProviderError(FallbackReason.LEASE_EXPIRED, "the worker's lease expired")
    lease = f"{rt.settings.gate_lease_seconds:g}"
    return ProviderError(
        FallbackReason.QUEUED_TOO_LONG,
        f"no worker took the job within its {lease} s hold (TERSIFY_GATE_LEASE_SECONDS): "
        "it waited in the queue; run more workers or raise the lease",
    )


def _rebuild(rt: Runtime, hold: ExpiredHold) -> tuple[PendingSummary | None, bool]:
    """The job behind ``hold`` (None: gone), and whether a worker ever took it."""
    taking = (keys.job_state(hold.job_id), keys.started(hold.job_id))
    raw, taken = execute(rt.redis, records.read(hold.job_id), command("exists", *taking))
    record = records.parse(raw)
    blob = rt.redis.get(keys.payload(record.payload)) if record is not None else None
    if record is None or blob is None:
        log.error("expired_job_unrecoverable", job_id=hold.job_id, session_id=hold.session_id)
        return None, bool(taken)
    try:
        job = record.job.with_output(payloads.decode(blob))
    except (InvalidJobError, ValueError) as exc:
        log.error("expired_job_unrecoverable", job_id=hold.job_id, error=str(exc)[:200])
        return None, bool(taken)
    return job, bool(taken)
