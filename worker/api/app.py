"""The ASGI app: ``create_app(settings)`` for tests and embedding, ``app_from_environment`` for
uvicorn's worker processes."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import redis
import structlog
from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.types import ASGIApp

from tersify.client import AsyncProducer
from tersify.client.aio import ListHeadWaiter
from tersify.errors import ConfigurationError, RedisUnavailableError
from tersify.settings import Settings
from tersify.store.redis_url import async_redis_client, redis_client
from tersify.text.spill import SpillStore
from tersify.worker.api import problems
from tersify.worker.api.auth import TokenTable
from tersify.worker.api.bodies import Health
from tersify.worker.api.bodylimit import BodyLimit
from tersify.worker.api.cancel import router as cancel_router
from tersify.worker.api.connections import ApiProtocol, api_limits
from tersify.worker.api.metrics import RequestMetrics
from tersify.worker.api.outputs import router as outputs_router
from tersify.worker.api.routes import router
from tersify.worker.runtime.logconfig import configure_logging

API_VERSION = "1.0.0"
REQUEST_OVERHEAD_BYTES = 64 * 1024

_log = structlog.get_logger(__name__)


class AuthNotConfiguredError(ConfigurationError):
    """No tokens are configured and insecure no-auth mode was not asked for."""


# JSON's \uXXXX escapes take 6 bytes for a 3-byte UTF-8 character and 12 for a 4-byte one
JSON_ESCAPE_FACTOR = 3


def max_request_bytes(settings: Settings) -> int:
    """The request body limit: its own setting, else room for the largest output JSON-escaped."""
    largest = settings.max_output_bytes * JSON_ESCAPE_FACTOR + REQUEST_OVERHEAD_BYTES
    return settings.api_max_request_bytes or largest


def token_table(settings: Settings) -> TokenTable | None:
    """The tokens to check, or None when auth is off; refuses to run open by accident."""
    table = TokenTable.from_settings(settings)
    if table:
        return table
    if settings.api_insecure_no_auth:
        return None
    raise AuthNotConfiguredError(
        "no API tokens: set TERSIFY_API_TOKENS (or TERSIFY_API_INSECURE_NO_AUTH=true on loopback)"
    )


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: Settings = app.state.settings
    # made once per process and shared by every request; nothing here is per-request state
    app.state.producer = AsyncProducer(settings, apart=True)  # run by the guarded CLI
    app.state.redis = async_redis_client(settings, decode=True)
    app.state.compactions = ListHeadWaiter(app.state.redis, settings)
    spill_client = redis_client(settings)
    app.state.spill = SpillStore(spill_client, ttl_seconds=settings.payload_ttl_seconds)
    _log.info("api_started", auth=app.state.tokens is not None)
    try:
        yield
    finally:
        await app.state.producer.close()
        await app.state.redis.aclose()
        spill_client.close()


def create_app(settings: Settings) -> FastAPI:
    """The API for ``settings``; ``AuthNotConfiguredError`` when it would run without auth."""
    app = FastAPI(
        title="tersify",
        version=API_VERSION,
        summary="Offload tool-output summarization and context compaction to tersify workers.",
        lifespan=_lifespan,
        docs_url=None,
        redoc_url=None,
        generate_unique_id_function=lambda route: route.name,  # operationIds: submit_summary, …
    )
    app.state.settings = settings
    app.state.tokens = token_table(settings)
    problems.install(app)
    app.include_router(router)
    app.include_router(outputs_router)
    app.include_router(cancel_router)
    app.add_api_route(
        "/healthz",
        _healthz,
        methods=["GET"],
        response_model=Health,
        summary="Health",
        responses=problems.documented("redis_unavailable"),
    )
    app.add_api_route(
        "/metrics",
        _metrics,
        methods=["GET"],
        summary="Prometheus metrics",
        response_class=Response,
        responses={
            200: {
                "content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}},
                "description": "Metrics.",
            }
        },
    )
    app.add_middleware(BodyLimit, max_bytes=max_request_bytes(settings))
    app.add_middleware(RequestMetrics)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = openapi_document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of ``app``, with the shared ``Problem`` schema and every error."""
    doc = get_openapi(title=app.title, version=app.version, summary=app.summary, routes=app.routes)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas["Problem"] = problems.Problem.model_json_schema()
    for path, item in doc["paths"].items():
        for operation in item.values():
            responses = operation["responses"]
            # every route can meet these: a body over the limit, an internal error
            responses.setdefault("413", problems.documented("payload_too_large")[413])
            responses.setdefault("500", problems.documented("internal_error")[500])
            if path.startswith("/v1/"):
                # a path parameter the router cannot match (a newline in it) finds no route
                responses.setdefault("404", problems.documented("not_found")[404])
                responses.setdefault("405", problems.documented("method_not_allowed")[405])
    for collection, getter in (("summaries", "get_summary"), ("compactions", "get_compaction")):
        accepted = doc["paths"][f"/v1/{collection}"]["post"]["responses"]["202"]
        accepted["links"] = {
            "GetResult": {"operationId": getter, "parameters": {"job_id": "$response.body#/job_id"}}
        }
    return doc


async def _healthz(request: Request) -> Health:
    """200 when this process reaches Redis, else the ``redis_unavailable`` problem."""
    client = request.app.state.redis
    try:
        await client.ping()
    except redis.RedisError as exc:
        raise RedisUnavailableError(f"ping failed: {type(exc).__name__}") from None
    return Health()


async def _metrics() -> Response:
    """This process's Prometheus registry (rendered in a thread: the event loop keeps serving)."""
    return Response(await asyncio.to_thread(generate_latest), media_type=CONTENT_TYPE_LATEST)


def app_from_environment() -> ASGIApp:
    """uvicorn's factory: Settings from ``TERSIFY_*`` (each worker process builds its own)."""
    settings = Settings()
    configure_logging(settings)
    limits = ApiProtocol.configure(api_limits(settings))
    _log.info("api_connection_limits", **dataclasses.asdict(limits))
    return create_app(settings)
