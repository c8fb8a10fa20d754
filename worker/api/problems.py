"""Error responses: RFC 9457 problem bodies with a stable ``code``, and the errors they map from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException

from tersify.errors import (
    HeldInputFullError,
    InvalidJobError,
    JobNotFoundError,
    OutputTooLargeError,
    RedisUnavailableError,
    TersifyError,
)

PROBLEM_MEDIA_TYPE: Final = "application/problem+json"

_log = structlog.get_logger(__name__)

# code -> (status, title); the codes are public surface: clients branch on them.
CODES: Final[dict[str, tuple[int, str]]] = {
    "unauthorized": (401, "Missing or invalid bearer token"),
    "forbidden_session": (403, "The token may not use this session"),
    "not_found": (404, "Not found"),
    "method_not_allowed": (405, "Method not allowed"),
    "payload_too_large": (413, "Request body too large"),
    "invalid_request": (422, "The request does not match the API's schema"),
    "invalid_job": (422, "The job was refused"),
    "held_input_full": (429, "The session holds all the input it may; take it first"),
    "quota_exceeded": (429, "The tenant's quota is used up; see Retry-After"),
    "internal_error": (500, "Internal error"),
    "redis_unavailable": (503, "Redis is unavailable"),
}


class Problem(BaseModel):
    """An error response (RFC 9457): ``code`` is stable, ``detail`` is for people."""

    model_config = ConfigDict(extra="forbid")

    type: str
    title: str
    status: int
    code: str
    detail: str


class ApiProblem(StarletteHTTPException):
    """Raised by routes and middleware to answer with a problem body.

    An ``HTTPException`` so that FastAPI lets it through while it reads a request body (it turns
    other errors raised there into a generic 400/422).
    """

    def __init__(self, code: str, detail: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(CODES[code][0], detail, headers)
        self.code = code
        self.detail = detail


def problem_response(
    code: str, detail: str, *, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """The ``application/problem+json`` response for ``code``."""
    status, title = CODES[code]
    body = Problem(
        type=f"urn:tersify:problem:{code}", title=title, status=status, code=code, detail=detail
    )
    return JSONResponse(
        body.model_dump(),
        status_code=status,
        headers=dict(headers) if headers else None,
        media_type=PROBLEM_MEDIA_TYPE,
    )


def problem_for(exc: TersifyError) -> tuple[str, str]:
    """The problem code and detail for a typed producer error."""
    if isinstance(exc, OutputTooLargeError):
        return "payload_too_large", str(exc)
    if isinstance(exc, HeldInputFullError):
        return ("payload_too_large" if exc.status == 413 else "held_input_full"), str(exc)
    if isinstance(exc, InvalidJobError):
        return "invalid_job", str(exc)
    if isinstance(exc, JobNotFoundError):
        return "not_found", str(exc)
    if isinstance(exc, RedisUnavailableError):
        return "redis_unavailable", str(exc)
    return "internal_error", type(exc).__name__


def _validation_detail(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()))
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def install(app: FastAPI) -> None:
    """Answer every error of ``app`` with a problem body."""

    async def on_problem(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiProblem)
        return problem_response(exc.code, exc.detail, headers=exc.headers)

    async def on_tersify(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, TersifyError)
        code, detail = problem_for(exc)
        if code in ("internal_error", "redis_unavailable"):
            route = getattr(request.scope.get("route"), "path", "-")
            _log.error("api_request_failed", route=route, code=code, error=detail)
        if code == "redis_unavailable":
            # the cause names Redis's host and port: for the log, not for every client
            detail = "Redis is unreachable; nothing was done, try again"
        return problem_response(code, detail)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        media = request.headers.get("content-type", "application/json").split(";")[0].strip()
        is_json = media == "application/json" or media.endswith("+json")
        if not is_json and any(e.get("loc", ("",))[0] == "body" for e in exc.errors()):
            return problem_response("invalid_request", "send Content-Type: application/json")
        if any(e.get("type") == "json_invalid" for e in exc.errors()):
            return problem_response("invalid_request", "the body is not valid JSON")
        return problem_response("invalid_request", _validation_detail(exc))

    async def on_http(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = {
            404: "not_found",
            405: "method_not_allowed",
            413: "payload_too_large",
        }.get(exc.status_code, "invalid_request")
        headers: dict[str, Any] | None = getattr(exc, "headers", None)
        return problem_response(code, str(exc.detail), headers=headers)

    async def on_crash(request: Request, exc: Exception) -> JSONResponse:
        # the route's template, not the path: a path names sessions and jobs
        route = getattr(request.scope.get("route"), "path", "-")
        _log.exception("api_request_crashed", route=route, error=type(exc).__name__)
        return problem_response("internal_error", "unexpected error; see the server log")

    app.add_exception_handler(ApiProblem, on_problem)
    app.add_exception_handler(TersifyError, on_tersify)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_crash)


def documented(*codes: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for the problem codes a route can answer with."""
    out: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        status, title = CODES[code]
        entry = out.setdefault(
            status,
            {
                "description": "",
                "content": {
                    PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}
                },
            },
        )
        entry["description"] = "; ".join(filter(None, [entry["description"], f"`{code}`: {title}"]))
    return out
