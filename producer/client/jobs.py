"""Turning a backend's call into a validated job: its record, its passthrough result."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tersify.classify import classify
from tersify.client.options import check_options
from tersify.client.outputs import new_output_ref
from tersify.contract import Method, PendingSummary, Queue, SummaryResult, ToolType, utcnow
from tersify.errors import InvalidJobError, invalid_fields
from tersify.settings import Settings
from tersify.store import passthroughs
from tersify.store.commands import Command
from tersify.text.excerpt import Excerpt, excerpt_of

# The gate's cap: the job's deadline plus time for its fallback to be stored.
GATE_CAP_MARGIN_SECONDS = 5.0


def typer(tool_name: object, command: object) -> Callable[[str], ToolType]:
    """How the excerpt of a cut output learns its tool type: from its head, once."""
    shell = command if isinstance(command, str) else None
    return lambda head: classify(str(tool_name), shell, head)


def excerpt(settings: Settings, fields: dict[str, Any]) -> Excerpt:
    """The submit call's output as its job will carry it: whole, or cut past
    ``TERSIFY_MAX_OUTPUT_BYTES`` (see ``tersify.text.excerpt``)."""
    query = fields.get("query")
    return excerpt_of(
        fields["output"],
        settings.max_output_bytes,
        settings.max_stored_output_bytes,
        typer(fields.get("tool_name"), fields.get("command")),
        query if isinstance(query, str) else None,
    )


def build_job(settings: Settings, **fields: Any) -> PendingSummary:
    """Validate a submit call's arguments into a ``PendingSummary``; ``InvalidJobError`` if bad.

    ``output`` is text, bytes, or the ``Excerpt`` that ``excerpt`` made of them.
    """
    kept = excerpt(settings, fields)
    fields.pop("output")
    output, replaced = kept.text, kept.decoded_with_replacement
    span = fields.pop("relevant_lines", None)
    if isinstance(span, tuple):
        span = {"start": span[0], "end": span[1]}
    try:
        queue = Queue(fields.pop("queue", Queue.INTERACTIVE))
    except ValueError as exc:
        raise InvalidJobError(invalid_fields(exc)) from None
    deadline = (
        settings.job_deadline_seconds
        if queue is Queue.INTERACTIVE
        else settings.batch_deadline_seconds
    )
    clean = {k: v for k, v in fields.items() if v is not None}
    try:
        job = PendingSummary.build(
            deadline_seconds=deadline,
            output=output,
            decoded_with_replacement=replaced,
            relevant_lines=span,
            queue=queue,
            output_ref=new_output_ref(),
            cut=kept.cut,
            **clean,
        )
    except (ValueError, TypeError) as exc:
        raise InvalidJobError(invalid_fields(exc)) from None
    check_options(settings, job.options)
    return job


def gate_cap(settings: Settings) -> float:
    """How long an interactive job may hold its session's gate at most."""
    return min(settings.gate_max_seconds, settings.job_deadline_seconds + GATE_CAP_MARGIN_SECONDS)


def passthrough(job: PendingSummary, tool_type: ToolType) -> SummaryResult:
    """The result of an output short enough to use as it is."""
    now = utcnow()
    return SummaryResult(
        job_id=job.job_id,
        session_id=job.session_id,
        tool_call_id=job.tool_call_id,
        text=job.output,
        method=Method.PASSTHROUGH,
        tool_type=tool_type,
        chars_in=len(job.output),
        chars_out=len(job.output),
        decoded_with_replacement=job.decoded_with_replacement,
        tenant=job.tenant,
        cut=job.cut,
        queued_at=job.created_at,
        started_at=now,
        finished_at=now,
    )


def stage_passthrough_log(
    settings: Settings, job: PendingSummary, result: SummaryResult
) -> tuple[Command, ...]:
    """The commands that hand a passthrough output and its result to the session log."""
    # The result's text is the output itself: stored once, put back by the worker that logs it.
    kept = result.model_dump(mode="json", exclude={"text"})
    entry = json.dumps(
        {"job": job.model_dump(mode="json"), "result": kept}, ensure_ascii=False
    ).encode("utf-8", "surrogatepass")
    ttl, most = settings.payload_ttl_seconds, settings.session_log_pending_max_bytes
    return passthroughs.stage(job.session_id, job.job_id, entry, ttl, most)
