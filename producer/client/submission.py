"""Submitting work: a tool output (or passed straight back), or a conversation to compact.

Each function is an operation of ``client.core``: written once, run by both producers.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any, Required, TypedDict

from opentelemetry.trace import SpanKind

from tersify.chat.compaction import CompactionJob
from tersify.classify import classify
from tersify.client import tracing
from tersify.client.core import Compute, GateScript, Operation, Round
from tersify.client.jobs import (
    build_job,
    excerpt,
    gate_cap,
    passthrough,
    stage_passthrough_log,
)
from tersify.client.options import summarizes
from tersify.client.outputs import stage_output
from tersify.contract import (
    JobOptions,
    LineRange,
    PendingSummary,
    Queue,
    SummaryResult,
    ToolType,
)
from tersify.errors import (
    InvalidJobError,
    OutputTooLargeError,
    RedisUnavailableError,
    invalid_fields,
)
from tersify.gate.protocol import GateCalls, Hold, Stored
from tersify.settings import Settings
from tersify.store import keys, payloads, records, sessions
from tersify.store.commands import Command, command
from tersify.store.publisher import push
from tersify.store.wire import COMPACT_TASK, SUMMARIZE_TASK, CompactionMessage, SummaryMessage
from tersify.text.excerpt import Excerpt

_STORE_FAILED = "could not store the job"


class Submission(TypedDict, total=False):
    """What ``submit`` takes: a tool's output, where it came from and what the agent wants.

    ``relevant_lines`` (FileContent) is kept verbatim; ``queue`` ``batch`` never gates the
    session; ``job_id`` makes a retried submit idempotent; ``options`` (``JobOptions`` or its
    dict) sets this job's budget, summary cap, model, passthrough or webhook; ``tenant`` is the
    API token's tenant.
    """

    session_id: Required[str]
    tool_name: Required[str]
    output: Required[object]
    command: str | None
    query: str | None
    tool_call_id: str | None
    relevant_lines: LineRange | tuple[int, int] | None
    queue: Queue
    job_id: str | None
    options: JobOptions | dict[str, Any] | None
    tenant: str | None


class CompactionRequest(TypedDict, total=False):
    """What ``compact`` takes: a session's messages (OpenAI or Anthropic shape) and how much of
    their head and tail to keep as they are (see docs/COMPACTION.md)."""

    session_id: Required[str]
    messages: Required[list[dict[str, Any]]]
    previous_summary: str | None
    protect_first: int
    protect_last: int


def submit(
    settings: Settings, gate: GateCalls, fields: Submission
) -> Operation[tuple[PendingSummary, SummaryResult | None]]:
    """Validate and enqueue a tool output; a short one (or ``summarize: false``) comes straight
    back as its passthrough result instead.

    Interactive jobs close the session gate before they are published and reopen it if
    publishing fails; batch jobs never touch the gate.
    """
    kept, job, tool_type = yield Compute(
        _validated, (settings, fields), _size(fields["output"]), apart=True
    )
    if summarizes(settings, job):
        with tracing.span(
            "tersify.submit", kind=SpanKind.PRODUCER, attributes=tracing.job_attributes(job)
        ):
            yield from enqueue(settings, gate, job, tool_type, kept.stored)
        return job, None
    result = passthrough(job, tool_type)
    logged = yield Compute(
        stage_passthrough_log, (settings, job, result), len(job.output), apart=True
    )
    with suppress(RedisUnavailableError):  # the answer matters more than the archive
        yield Round(logged, "could not log the output")
    return job, result


def _validated(settings: Settings, fields: Submission) -> tuple[Excerpt, PendingSummary, ToolType]:
    """The call's output as the job carries it (whole or cut), the job, its tool type: the CPU
    work of a submit, on the asyncio face off its event loop for a large output."""
    kept = excerpt(settings, dict(fields))
    job = build_job(settings, **{**fields, "output": kept})
    return kept, job, classify(job.tool_name, job.command, job.output)


def _size(output: object) -> int | None:
    """How much text a submit works on, for ``Compute``; None when it is not text."""
    return len(output) if isinstance(output, str | bytes) else None


def enqueue(
    settings: Settings,
    gate: GateCalls,
    job: PendingSummary,
    tool_type: ToolType,
    stored: str | None = None,
) -> Operation[None]:
    """Store the payload, the job's record, its index and its output link, and close the gate
    (interactive), in one atomic script; then publish; undo the job and its hold if publishing
    fails.

    ``stored``: the whole output, when the job carries an excerpt of it; ``output_ref`` then
    reads it instead of the excerpt.
    """
    sid = job.session_id
    digest, blob = yield Compute(payloads.encode, (job.output, sid), len(job.output))
    blobs = [(digest, blob)]
    whole = digest
    if stored is not None:
        whole, whole_blob = yield Compute(payloads.encode, (stored, sid), len(stored))
        blobs.append((whole, whole_blob))
    owned: tuple[str, ...] = ()
    writes: list[Command] = []
    if job.output_ref is not None:
        link = stage_output(
            job.output_ref,
            sid,
            whole,
            settings.payload_ttl_seconds,
            job_id=job.job_id,
            tool_type=tool_type.value,
        )
        writes.append(link)
        owned = (keys.output(job.output_ref),)
    hold: Hold | None = None
    if job.queue is Queue.INTERACTIVE:
        hold = {"tool_type": tool_type.value, "cap_seconds": gate_cap(settings)}
    # the job id's owner is checked before anything is written: a refusal leaves nothing
    what: Stored = {
        "session_id": sid,
        "record": records.encode(job, digest, tool_type),
        "record_ttl": settings.result_ttl_seconds,
        "payloads": blobs,
        "payload_ttl": settings.payload_ttl_seconds,
        "fields": sessions.fields((job.job_id,), owned, dict.fromkeys(d for d, _ in blobs)),
        "writes": writes,
    }
    token: int | None = yield GateScript(gate.enqueue(job.job_id, what, hold))
    try:
        message = SummaryMessage.for_job(job, digest, token, tool_type).model_dump(mode="json")
        send = push(SUMMARIZE_TASK, message, job.queue, job.job_id, tracing.carrier())
        yield Round((send,), f"could not publish {SUMMARIZE_TASK}")
    except GeneratorExit:
        raise  # abandoned, not failed: nothing may be yielded any more
    except BaseException:
        yield from _undo(gate, job, token)
        raise


def _undo(gate: GateCalls, job: PendingSummary, token: int | None) -> Operation[None]:
    try:
        if token is not None:
            yield GateScript(gate.release(job.session_id, job.job_id, token))
        yield Round((command("delete", keys.job_meta(job.job_id)),), "could not undo the job")
    except RedisUnavailableError:
        pass  # Redis is gone: so is the state to undo, and the gate's lease expires anyway


def compact(settings: Settings, fields: CompactionRequest) -> Operation[str]:
    """Store a conversation and enqueue its compaction; returns the job id."""
    packed: tuple[CompactionJob, str, bytes] = yield Compute(_packed, (settings, fields))
    job, digest, blob = packed
    ttl, kept = settings.payload_ttl_seconds, settings.result_ttl_seconds
    sid = job.session_id
    writes = (
        payloads.stage(sid, digest, blob, ttl),
        command("set", keys.compaction_job(job.job_id), sid, ex=kept),
        *sessions.index(sid, kept, jobs=(job.job_id,), digests=(digest,)),
    )
    message = CompactionMessage(job_id=job.job_id, payload=digest).model_dump(mode="json")
    send = push(COMPACT_TASK, message, Queue.INTERACTIVE, job.job_id)
    yield Round((*writes, send), _STORE_FAILED)  # no gate to close first: one round trip
    return job.job_id


def _packed(settings: Settings, fields: CompactionRequest) -> tuple[CompactionJob, str, bytes]:
    """The compaction job of ``fields`` and its stored form (CPU work: validated, serialized,
    hashed, compressed); ``InvalidJobError`` or ``OutputTooLargeError`` when it cannot be."""
    try:
        job = CompactionJob.build(deadline_seconds=settings.compaction_deadline_seconds, **fields)
    except (ValueError, TypeError) as exc:
        raise InvalidJobError(invalid_fields(exc)) from None
    body = job.model_dump_json()
    size = len(body.encode("utf-8", "surrogatepass"))
    if size > settings.max_output_bytes:
        raise OutputTooLargeError(
            f"the conversation is {size:,} bytes, over the cap of {settings.max_output_bytes:,} "
            "(TERSIFY_MAX_OUTPUT_BYTES): compact fewer messages, or raise the cap"
        )
    digest, blob = payloads.encode(body, job.session_id)
    return job, digest, blob
