"""``DELETE /v1/summaries/{job_id}``: cancel a job (dropped when queued, ended when running)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request

from tersify.client import AsyncProducer
from tersify.client.cancel import Cancellation
from tersify.errors import JobNotFoundError
from tersify.settings import Settings
from tersify.worker.api.auth import Caller
from tersify.worker.api.problems import documented
from tersify.worker.redact import leaving_with

router = APIRouter(prefix="/v1")


@router.delete(
    "/summaries/{job_id}",
    response_model=Cancellation,
    summary="Cancel a job",
    responses=documented("unauthorized", "not_found", "invalid_request", "redis_unavailable"),
)
async def cancel_summary(
    job_id: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{8,64}$", description="A job id.")],
    caller: Caller,
    request: Request,
) -> Cancellation:
    """Cancel the job: its state then (queued, running, finished) and its result now."""
    producer: AsyncProducer = request.app.state.producer
    if caller.scope is not None:
        owner = await producer.job_session(job_id)
        if owner is None or not caller.allows(owner):
            raise JobNotFoundError(f"no job {job_id!r}")
    cancelled = await producer.cancel(job_id)
    settings: Settings = request.app.state.settings
    return cancelled.model_copy(update={"result": leaving_with(cancelled.result, settings.redact)})
