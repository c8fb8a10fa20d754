"""Cancelling a job: a queued one is dropped, a running one ends now with the fallback.

Either way the canceller stores the job's result itself — ``method=fallback``,
``fallback_reason=cancelled``, the output cut to the job's budget — through the gate's
``complete``, so the result, the gate's release and the waiters' wake-up are one atomic step.
A worker that takes the job afterwards finds the result and drops it; one still running it has
its own answer kept aside as a late result. A job that had already finished is left as it was.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from tersify.client.core import Compute, GateScript, Operation, Round
from tersify.contract import FallbackReason, Method, SummaryHeader, SummaryResult, ToolType, utcnow
from tersify.errors import JobNotFoundError
from tersify.gate import CompletionOutcome
from tersify.gate.protocol import GateCalls, stored_holds
from tersify.settings import Settings
from tersify.store import keys, payloads, records, sessions, webhooks
from tersify.store.commands import command
from tersify.text import truncate

# The cancelled result's text: the output cut to the job's budget, at most this many lines.
_MAX_LINES = 80
_FAILED = "could not cancel"


class JobState(StrEnum):
    """Where a job was when it was cancelled."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"


class Cancellation(BaseModel):
    """What cancelling did: the job's state then, and its result now."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    job_id: str
    state: JobState
    result: SummaryResult


def cancel_job(settings: Settings, gate: GateCalls, job_id: str) -> Operation[Cancellation]:
    """Cancel ``job_id``; ``JobNotFoundError`` when no such job is known."""
    reads = (
        command("lindex", keys.result(job_id), 0),
        records.read(job_id),
        command("exists", keys.job_state(job_id), keys.started(job_id)),
    )
    stored, raw, started = yield Round(reads, _FAILED)
    if stored is not None:
        return Cancellation(job_id=job_id, state=JobState.FINISHED, result=_parse(stored))
    record = records.parse(raw)
    if record is None:
        raise JobNotFoundError(f"no job {job_id!r} (never submitted, or its result expired)")
    more = (
        command("get", keys.payload(record.payload)),
        command("hget", keys.session(record.session_id), sessions.GATE),
    )
    blob, gate_json = yield Round(more, _FAILED)
    job = record.job
    result = yield Compute(_cancelled, (job, ToolType(record.tool_type), blob, settings))
    token = next((h.token for h in stored_holds(gate_json) if h.job_id == job_id), None)
    sid = job.session_id if token is not None else None
    ttl = settings.result_ttl_seconds
    complete = gate.complete(job_id, result.model_dump_json(), ttl, sid, token)
    if (yield GateScript(complete)) is CompletionOutcome.LATE:  # the worker's result came first
        (raw,) = yield Round((command("lindex", keys.result(job_id), 0),), _FAILED)
        return Cancellation(job_id=job_id, state=JobState.FINISHED, result=_parse(raw))
    if job.options is not None and job.options.callback_url is not None:
        delivery = webhooks.delivery(job.options.callback_url, result)
        yield Round(webhooks.schedule(delivery, settings.result_ttl_seconds), _FAILED)
    state = JobState.RUNNING if started else JobState.QUEUED
    return Cancellation(job_id=job_id, state=state, result=result)


def _parse(raw: Any) -> SummaryResult:
    return SummaryResult.model_validate_json(raw)


def _cancelled(
    job: SummaryHeader, tool_type: ToolType, blob: bytes | None, settings: Settings
) -> SummaryResult:
    """The cancelled job's result: its stored output (``blob``) cut to its budget (CPU work)."""
    output = payloads.decode(blob) if blob is not None else ""
    budget = settings.local_budget_chars
    if job.options is not None and job.options.budget_chars is not None:
        budget = job.options.budget_chars
    text = truncate(output, budget, _MAX_LINES)
    now = utcnow()
    return SummaryResult(
        job_id=job.job_id,
        session_id=job.session_id,
        tool_call_id=job.tool_call_id,
        text=text,
        method=Method.FALLBACK,
        tool_type=tool_type,
        chars_in=len(output),
        chars_out=len(text),
        fallback_reason=FallbackReason.CANCELLED,
        fallback_detail="cancelled",
        decoded_with_replacement=job.decoded_with_replacement,
        queued_at=job.created_at,
        started_at=now,
        finished_at=now,
        output_ref=job.output_ref,
        cut=job.cut,
    )
