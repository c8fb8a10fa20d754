"""``GET /v1/outputs/{ref}``: the full output behind a summary, by ranges or matching lines."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from tersify.client import AsyncProducer
from tersify.client.outputs import (
    DEFAULT_LIMIT,
    MAX_GREP_CHARS,
    MAX_LIMIT,
    MAX_OFFSET,
    REF_PATTERN,
    OutputRange,
)
from tersify.worker.api.auth import Caller
from tersify.worker.api.problems import documented

router = APIRouter(prefix="/v1")


@router.get(
    "/outputs/{ref}",
    response_model=OutputRange,
    summary="Read the full output behind a result (a range, or the lines matching grep)",
    responses=documented("unauthorized", "not_found", "invalid_request", "redis_unavailable"),
)
async def read_output(
    ref: Annotated[str, Path(pattern=REF_PATTERN, description="A result's output_ref.")],
    caller: Caller,
    request: Request,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="First line, 0-based.")] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Most lines.")] = DEFAULT_LIMIT,
    grep: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=MAX_GREP_CHARS,
            description="Only lines containing this text (case-insensitive, not a regex).",
        ),
    ] = None,
) -> OutputRange:
    """Lines of the output from ``offset`` on; another session's output reads as not found."""
    producer: AsyncProducer = request.app.state.producer
    scope = None if caller.scope is None else caller.allows
    return await producer.read_output(ref, offset, limit, grep=grep, session_id=scope)
