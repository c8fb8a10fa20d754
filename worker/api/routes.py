"""The ``/v1`` routes: each one a thin adapter over ``producer`` (async where it can be)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Annotated, cast

import redis
import redis.asyncio
from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from tersify.chat.compaction import CompactionResult
from tersify.chat.pairs import repair_messages
from tersify.client import AsyncProducer
from tersify.client.aio import ListHeadWaiter
from tersify.client.forget import Forgotten
from tersify.client.tenants import admit
from tersify.contract import Method, Queue, SessionId, SummaryResult
from tersify.errors import JobNotFoundError, RedisUnavailableError, ResultTimeoutError
from tersify.gate import GateStatus
from tersify.settings import Settings
from tersify.store import keys
from tersify.text.spill import SpillRange, SpillStore
from tersify.worker.api.auth import Caller, Principal
from tersify.worker.api.bodies import (
    CompactionRequest,
    HeldCount,
    HeldInput,
    HeldMessages,
    JobAccepted,
    Repaired,
    RepairRequest,
    SummaryRequest,
)
from tersify.worker.api.bodyparse import ParsedApartRoute
from tersify.worker.api.liveness import WARNING_DOC, unserved
from tersify.worker.api.problems import ApiProblem, documented
from tersify.worker.redact import Scope, leaving_with
from tersify.worker.store.sessionlog import forget_files

# JSON bodies (a submit, a conversation to compact) are parsed apart when large: bodyparse.py
router = APIRouter(prefix="/v1", route_class=ParsedApartRoute)

JobId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{8,64}$", description="A job id.")]
SessionPath = Annotated[SessionId, Path(description="The session id (URL-encode any '/').")]
Wait = Annotated[
    float,
    Query(ge=0, le=300, description="Seconds to wait for it (long-poll); capped by the server."),
]
_AUTH = ("unauthorized",)
_REDIS = ("redis_unavailable",)


async def _awaited(call: Awaitable[str | None] | str | None) -> str | None:
    # redis-py types its commands for both clients at once; on redis.asyncio they are awaitable
    return await cast("Awaitable[str | None]", call)


async def _result_response(request: Request, result: SummaryResult) -> Response:
    """A result as it may leave (``tersify.worker.redact.outgoing``), redacted and rendered off
    the event loop when its text is large (a passthrough may be megabytes)."""
    settings: Settings = request.app.state.settings
    body = await _producer(request).compute(
        _rendered, result, settings.redact, size=len(result.text), apart=True
    )
    return Response(body, media_type="application/json")


def _rendered(result: SummaryResult, redact: frozenset[Scope]) -> bytes:
    return leaving_with(result, redact).model_dump_json().encode()


def _producer(request: Request) -> AsyncProducer:
    producer: AsyncProducer = request.app.state.producer
    return producer


def _accepted(request: Request, name: str, job_id: str, warning: str | None = None) -> JSONResponse:
    body = JobAccepted(job_id=job_id).model_dump()
    headers = {"Location": str(request.url_for(name, job_id=job_id).path)}
    if warning is not None:
        headers["Warning"] = warning
    return JSONResponse(body, status_code=202, headers=headers)


async def _admit(request: Request, caller: Principal) -> None:
    """Count a submit against the caller's tenant; the ``quota_exceeded`` problem past a cap."""
    if caller.tenant is None:
        return
    quota = request.app.state.settings.tenants.get(caller.tenant)
    if quota is None:
        return
    try:
        refused = await admit(request.app.state.redis, caller.tenant, quota)
    except redis.RedisError as exc:
        raise RedisUnavailableError(f"could not count the submit: {type(exc).__name__}") from None
    if refused is not None:
        retry = {"Retry-After": str(refused.retry_after_seconds)}
        raise ApiProblem("quota_exceeded", refused.detail, headers=retry)


def _capped(request: Request, wait: float) -> float:
    settings: Settings = request.app.state.settings
    return min(wait, settings.api_max_wait_seconds)


@router.post(
    "/summaries",
    response_model=None,
    summary="Submit a tool output",
    responses={
        200: {"model": SummaryResult, "description": "Short enough: passed through, no job."},
        202: {
            "model": JobAccepted,
            "description": "Queued; GET the Location for the result.",
            "headers": WARNING_DOC,
        },
        **documented(
            *_AUTH,
            "forbidden_session",
            "payload_too_large",
            "invalid_job",
            "invalid_request",
            "quota_exceeded",
            *_REDIS,
        ),
    },
)
async def submit_summary(body: SummaryRequest, caller: Caller, request: Request) -> Response:
    """Submit a tool output; a short one comes straight back as a ``passthrough`` result."""
    caller.check(body.session_id)
    await _admit(request, caller)
    producer = _producer(request)
    handle = await producer.submit(**body.model_dump(exclude_none=True), tenant=caller.tenant)
    # a passthrough handle already holds its result; a queued job's read is one Redis call
    result = await handle.result()
    if result is not None and result.method is Method.PASSTHROUGH:
        return await _result_response(request, result)
    return _accepted(request, "get_summary", handle.job_id, await unserved(producer, body.queue))


@router.get(
    "/summaries/{job_id}",
    response_model=None,
    summary="Get a summary (optionally long-polling)",
    responses={
        200: {"model": SummaryResult, "description": "The result."},
        202: {"model": JobAccepted, "description": "Still running (after any wait)."},
        **documented(*_AUTH, "not_found", "invalid_request", *_REDIS),
    },
)
async def get_summary(
    job_id: JobId, caller: Caller, request: Request, wait: Wait = 0.0
) -> Response:
    """The job's result: 200 when stored, 202 while running, 404 for an unknown job."""
    producer = _producer(request)
    result = await producer.get(job_id)
    if result is None:
        await _check_job_session(request, caller, job_id)
        timeout = _capped(request, wait)
        if timeout > 0:
            try:
                result = await producer.wait(job_id, timeout)
            except ResultTimeoutError:
                result = None
    if result is None:
        return _accepted(request, "get_summary", job_id)
    if not caller.allows(result.session_id):
        raise JobNotFoundError(f"no job {job_id!r}")  # another session's job: not this caller's
    return await _result_response(request, result)


async def _check_job_session(request: Request, caller: Caller, job_id: str) -> None:
    if caller.scope is None:
        return
    owner = await _producer(request).job_session(job_id)
    if owner is None or not caller.allows(owner):
        raise JobNotFoundError(f"no job {job_id!r}")


@router.post(
    "/compactions",
    status_code=202,
    response_model=JobAccepted,
    summary="Submit a conversation to compact",
    responses={
        202: {"description": "Queued; GET the Location for the result.", "headers": WARNING_DOC},
        **documented(
            *_AUTH,
            "forbidden_session",
            "payload_too_large",
            "invalid_job",
            "invalid_request",
            "quota_exceeded",
            *_REDIS,
        ),
    },
)
async def submit_compaction(
    body: CompactionRequest, caller: Caller, request: Request
) -> JSONResponse:
    """Queue a compaction of ``messages``; GET the Location for the compacted conversation."""
    caller.check(body.session_id)
    await _admit(request, caller)
    producer = _producer(request)
    handle = await producer.compact(**body.model_dump())
    warning = await unserved(producer, Queue.INTERACTIVE)
    return _accepted(request, "get_compaction", handle.job_id, warning)


@router.get(
    "/compactions/{job_id}",
    response_model=None,
    summary="Get a compaction (optionally long-polling)",
    responses={
        200: {"model": CompactionResult, "description": "The compacted conversation."},
        202: {"model": JobAccepted, "description": "Not stored yet: the job is running."},
        **documented(*_AUTH, "not_found", "invalid_request", *_REDIS),
    },
)
async def get_compaction(
    job_id: JobId, caller: Caller, request: Request, wait: Wait = 0.0
) -> JSONResponse:
    """The compaction's result: 200 when stored, 202 while running, 404 when unknown.

    Whose job it is is checked before any wait, so an unknown or foreign id answers 404 at once.
    """
    client: redis.asyncio.Redis = request.app.state.redis
    waiter: ListHeadWaiter = request.app.state.compactions
    try:
        owner = await _awaited(client.get(keys.compaction_job(job_id)))
    except redis.RedisError as exc:
        raise RedisUnavailableError(f"could not read the job: {type(exc).__name__}") from None
    if owner is not None and not caller.allows(str(owner)):
        raise JobNotFoundError(f"no compaction {job_id!r}")
    # the job's record may expire just before its result: then only a stored result answers
    timeout = _capped(request, wait) if owner is not None else 0.0
    raw = await waiter.head(keys.compaction_result(job_id), timeout)
    if raw is None:
        if owner is None:
            raise JobNotFoundError(f"no compaction {job_id!r}")
        return _accepted(request, "get_compaction", job_id)
    result = CompactionResult.model_validate_json(raw)
    if not caller.allows(result.session_id):
        raise JobNotFoundError(f"no compaction {job_id!r}")
    return JSONResponse(result.model_dump(mode="json"))


@router.get(
    "/sessions/{session_id:path}/gate",
    response_model=GateStatus,
    summary="Gate status (optionally waiting for it to open)",
    responses=documented(*_AUTH, "forbidden_session", "invalid_request", *_REDIS),
)
async def gate_status(
    session_id: SessionPath, caller: Caller, request: Request, wait: Wait = 0.0
) -> GateStatus:
    """The session's gate: ``open``, the live jobs holding it, the count of held input."""
    caller.check(session_id)
    producer = _producer(request)
    timeout = _capped(request, wait)
    if timeout > 0:
        await producer.gate.wait_open(session_id, timeout)
    return await producer.gate.status(session_id)


@router.post(
    "/sessions/{session_id:path}/held-input/take",
    response_model=HeldMessages,
    summary="Take the held input (when the gate is open)",
    responses=documented(*_AUTH, "forbidden_session", "invalid_request", *_REDIS),
)
async def take_held_input(
    session_id: SessionPath, caller: Caller, request: Request
) -> HeldMessages:
    """All held input, oldest first, removed atomically; [] while the gate is closed."""
    caller.check(session_id)
    producer = _producer(request)
    return HeldMessages(messages=await producer.gate.take_held(session_id))


@router.post(
    "/sessions/{session_id:path}/held-input",
    response_model=HeldCount,
    summary="Hold user input until the gate opens",
    responses=documented(
        *_AUTH,
        "forbidden_session",
        "payload_too_large",
        "held_input_full",
        "invalid_job",
        "invalid_request",
        *_REDIS,
    ),
)
async def hold_input(
    session_id: SessionPath, body: HeldInput, caller: Caller, request: Request
) -> HeldCount:
    """Queue input that arrived while the gate was closed; returns how much is held.

    Past the session's caps (``TERSIFY_GATE_MAX_HELD_INPUTS``, ``TERSIFY_GATE_MAX_HELD_BYTES``)
    nothing is added: 429 ``held_input_full``, or 413 for one message over the byte cap.
    """
    caller.check(session_id)
    producer = _producer(request)
    return HeldCount(held_inputs=await producer.gate.hold_input(session_id, body.message))


@router.get(
    "/spill/{ref}",
    response_model=SpillRange,
    summary="Read lines of a spilled full output",
    responses=documented(*_AUTH, "not_found", "invalid_request", *_REDIS),
)
async def read_spill(
    ref: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{8,64}$", description="The spill ref.")],
    caller: Caller,
    request: Request,
    offset: Annotated[int, Query(ge=0, le=2**31, description="First line, 0-based.")] = 0,
    limit: Annotated[int, Query(ge=0, le=10_000, description="Most lines returned.")] = 2000,
) -> SpillRange:
    """Lines ``offset`` .. ``offset + limit - 1`` of a text ``truncate`` spilled."""
    store: SpillStore = request.app.state.spill
    owner: str | None = None
    if caller.scope is not None:
        client: redis.asyncio.Redis = request.app.state.redis
        try:
            found = await _awaited(client.hget(keys.spill(ref), "session_id"))
        except redis.RedisError as exc:
            raise RedisUnavailableError(f"could not read the spill: {type(exc).__name__}") from None
        if found is None or not caller.allows(str(found)):
            raise ApiProblem("not_found", f"no spilled output {ref!r} (unknown or expired)")
        owner = str(found)
    return await asyncio.to_thread(store.read_spill, ref, offset, limit, session_id=owner)


@router.delete(
    "/sessions/{session_id:path}",
    response_model=Forgotten,
    summary="Forget a session: its data in Redis and its log files on this host",
    responses=documented(*_AUTH, "forbidden_session", "invalid_request", *_REDIS),
)
async def forget_session(session_id: SessionPath, caller: Caller, request: Request) -> Forgotten:
    """Delete the session's jobs, outputs, results, gate state, held input and log files."""
    caller.check(session_id)
    report = await _producer(request).forget(session_id)
    directory = request.app.state.settings.session_log_dir
    report.log_files = await asyncio.to_thread(forget_files, directory, session_id)
    return report


@router.post(
    "/repair",
    response_model=Repaired,
    summary="Remove broken tool pairs from a conversation",
    responses=documented(*_AUTH, "payload_too_large", "invalid_job", "invalid_request"),
)
async def repair_conversation(body: RepairRequest, caller: Caller) -> Repaired:
    """The messages with unanswered calls and orphan results removed; valid ones unchanged."""
    fixed = await asyncio.to_thread(repair_messages, body.messages, body.shape)
    return Repaired(messages=fixed, removed=len(body.messages) - len(fixed))
