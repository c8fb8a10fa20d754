"""The gateway's ASGI app: read a request, rewrite its tool results, forward it, relay the answer.

Requests in a format the gateway reads (``upstream.route``) have their large tool results
replaced (``rewrite``) and carry back ``tersify-*`` headers: the session, the estimated tokens
before and after, the estimated saving and what was replaced; a request whose results had to
pass whole carries a ``Warning`` saying why. Every other request, and any body the gateway
cannot read, goes on byte for byte. ``/tersify/metrics`` and ``/tersify/health`` are the
gateway's own.

A client that goes away is noticed at once: the upstream request is closed, while summaries
being made go on and are stored for the client's retry.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import redis.asyncio
import structlog
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from tersify.client import AsyncProducer
from tersify.errors import OutputTooLargeError
from tersify.settings import Settings
from tersify.store.redis_url import aclose, async_redis_client
from tersify.worker.gateway import metrics, savings
from tersify.worker.gateway.formats import Api, RequestView, read
from tersify.worker.gateway.rewrite import RequestEdits, Rewriter
from tersify.worker.gateway.sessions import client_of, session_of
from tersify.worker.gateway.spans import splice
from tersify.worker.gateway.store import Counts, RewriteStore
from tersify.worker.gateway.upstream import (
    Headers,
    Upstream,
    is_anthropic,
    origin_path,
    relayed,
    route,
)

log = structlog.get_logger("tersify.gateway")
REWRITE_FAILED = "the rewrite failed: tool results passed whole (see the gateway's log)"
UNREADABLE = "the body is not UTF-8 JSON of the expected shape: forwarded as sent"

Scope = dict[str, Any]
Message = dict[str, Any]


class BodyTooLargeError(OutputTooLargeError):
    """The request body is over ``TERSIFY_GATEWAY_MAX_BODY_BYTES``."""


@dataclass(slots=True)
class Prepared:
    """What goes upstream: the body, and the headers to add to the answer."""

    body: bytes
    headers: Headers = field(default_factory=list)


@dataclass(slots=True)
class Exchange:
    """One request in flight: whether its answer was sent whole."""

    complete: bool = False


class Gateway:
    """The gateway for one process: its producer, store, rewriter and upstream client."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.producer = AsyncProducer(settings, apart=True)  # run by the guarded CLI
        self._redis: redis.asyncio.Redis = async_redis_client(settings)
        self.store = RewriteStore(self._redis, settings)
        self.rewriter = Rewriter(self.producer, self.store, settings)
        self.upstream = Upstream(settings)
        self._session_headers = settings.gateway_session_headers

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """The ASGI entry point."""
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if origin_path(scope["raw_path"]) is None:  # "@host:port/…", "http://h/…", "*"
            await _error(send, scope, 400, "the request target must be a path (/…)")
            metrics.REQUESTS.labels("other", "refused").inc()
            return
        if scope["path"].startswith("/tersify/"):
            await self._own(scope, send)
            return
        try:
            body = await _read_body(receive, self.settings.gateway_max_body_bytes)
        except BodyTooLargeError:
            limit = self.settings.gateway_max_body_bytes
            await _error(send, scope, 413, f"request body over {limit} bytes")
            metrics.REQUESTS.labels(_api_label(scope), "refused").inc()
            return
        if body is None:
            return  # the client left while sending
        await self._guarded(scope, receive, send, body)

    async def _guarded(self, scope: Scope, receive: Any, send: Any, body: bytes) -> None:
        """Serve the request; stop at once if the client goes away first."""
        exchange = Exchange()
        work = asyncio.ensure_future(self._serve(scope, send, body, exchange))
        gone = asyncio.ensure_future(_disconnected(receive))
        await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
        if gone.done() and not work.done() and not exchange.complete:
            work.cancel()
            metrics.DISCONNECTS.inc()
            log.info("gateway_client_disconnected", api=_api_label(scope))
        gone.cancel()
        await asyncio.gather(work, gone, return_exceptions=True)
        if work.done() and not work.cancelled() and (exc := work.exception()) is not None:
            raise exc

    async def _serve(self, scope: Scope, send: Any, body: bytes, exchange: Exchange) -> None:
        api = route(scope["method"], scope["path"])
        headers: Headers = list(scope["headers"])
        address = (scope.get("client") or (None,))[0]
        prepared = await self._prepare(api, headers, body, address)
        path = origin_path(scope["raw_path"]) or b"/"
        url = self.upstream.url(path, scope.get("query_string", b""), headers)
        request = self.upstream.request(scope["method"], url, headers, prepared.body)
        try:
            response = await self.upstream.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            log.warning("gateway_upstream_unreachable", host=url.host, error=type(exc).__name__)
            metrics.REQUESTS.labels(_api_label(scope), "failed").inc()
            code = 504 if isinstance(exc, httpx.TimeoutException) else 502
            await _error(send, scope, code, f"upstream unreachable: {type(exc).__name__}")
            return
        try:
            start = relayed(list(response.headers.raw)) + prepared.headers
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": start}
            )
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            exchange.complete = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except httpx.HTTPError as exc:  # the answer broke off: so does the client's
            log.warning("gateway_upstream_broke_off", host=url.host, error=type(exc).__name__)
        finally:
            await response.aclose()

    async def _prepare(
        self, api: Api | None, headers: Headers, body: bytes, address: str | None
    ) -> Prepared:
        """The body to forward, rewritten when it is a request the gateway reads."""
        if api is None or _has(headers, b"content-encoding"):
            return Prepared(body)
        started = time.perf_counter()
        compute = self.producer.compute  # CPU work on the body: off the event loop when large
        try:
            text, conversation = await compute(_read, api, body, size=len(body))
        except Exception as exc:  # any body it cannot read (encoding, depth, shape) goes on whole
            why = type(exc).__name__  # the message may quote the body: not logged
            log.info("gateway_body_forwarded_as_is", api=api.value, why=why)
            metrics.REQUESTS.labels(api.value, "forwarded").inc()
            return Prepared(body, [_warning(UNREADABLE)])
        named = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
        client = client_of(named, address)
        session_id = session_of(named, self._session_headers, conversation, client)
        try:
            outcome = await self.rewriter.rewrite(session_id, conversation)
        except Exception:  # a bug must not lose the request: it goes on as the client sent it
            log.exception("gateway_rewrite_failed", session_id=session_id)
            outcome = RequestEdits(warning=REWRITE_FAILED)
        sent, counts = await compute(self._sent, conversation.model, text, outcome, size=len(body))
        prepared = Prepared(sent if sent is not None else body)
        prepared.headers = _headers(session_id, counts, outcome, conversation.model, self.settings)
        self.rewriter.count_later(session_id, counts)
        _observe(api, outcome, counts, time.perf_counter() - started)
        return prepared

    def _sent(
        self, model: str | None, text: str, outcome: RequestEdits
    ) -> tuple[bytes | None, Counts]:
        """The rewritten body (None: the client's as it came) and the request's counts."""
        if not outcome.edits:
            return None, self._counts(model, text, text, outcome)
        sent = splice(text, outcome.edits)
        return sent.encode("utf-8", "backslashreplace"), self._counts(model, text, sent, outcome)

    def _counts(self, model: str | None, before: str, after: str, outcome: RequestEdits) -> Counts:
        tokens_before = savings.tokens(before)
        tokens_after = savings.tokens(after) if outcome.edits else tokens_before
        saved = savings.saved_usd(self.settings, model, tokens_before, tokens_after)
        return Counts(
            rewritten=outcome.rewritten,
            reused=outcome.reused,
            fallbacks=outcome.fallbacks,
            reruns=outcome.reruns,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            saved_usd=saved or 0.0,
        )

    async def _own(self, scope: Scope, send: Any) -> None:
        """``/tersify/metrics`` and ``/tersify/health``."""
        if scope["path"] == "/tersify/metrics":
            await _answer(send, 200, CONTENT_TYPE_LATEST.encode(), generate_latest())
        elif scope["path"] == "/tersify/health":
            await _answer(send, 200, b"application/json", b'{"status":"ok"}')
        else:
            await _answer(send, 404, b"application/json", b'{"error":"not found"}')

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def close(self) -> None:
        """Let replacements being made finish, then close every connection."""
        await self.rewriter.drain()
        await self.upstream.close()
        await self.producer.close()
        await aclose(self._redis)


def _read(api: Api, body: bytes) -> tuple[str, RequestView]:
    """The body as text and what the gateway reads of it; any failure: not a body to edit."""
    text = body.decode("utf-8")
    return text, read(api, text)


async def _read_body(receive: Any, limit: int) -> bytes | None:
    """The whole request body; None when the client left; ``BodyTooLargeError`` past ``limit``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _disconnected(receive: Any) -> None:
    """Return once the client is gone (or the answer is complete: the server says the same)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _has(headers: Headers, name: bytes) -> bool:
    return any(key.lower() == name for key, _ in headers)


def _api_label(scope: Scope) -> str:
    api = route(scope["method"], scope["path"])
    return api.value if api is not None else "other"


def _headers(
    session_id: str, counts: Counts, outcome: RequestEdits, model: str | None, settings: Settings
) -> Headers:
    """The ``tersify-*`` headers of a rewritten-format answer, and a warning when degraded."""
    found = [
        (b"tersify-session", session_id.encode()),
        (b"tersify-tokens-before", str(counts.tokens_before).encode()),
        (b"tersify-tokens-after", str(counts.tokens_after).encode()),
        (
            b"tersify-rewrites",
            f"new={outcome.rewritten}, reused={outcome.reused}, "
            f"fallback={outcome.fallbacks}".encode(),
        ),
    ]
    if outcome.reruns:  # new replacements that say what changed since an earlier run
        found.append((b"tersify-reruns", str(outcome.reruns).encode()))
    if savings.input_price(settings, model) is not None:
        found.append((b"tersify-saved-usd", f"{counts.saved_usd:.6f}".encode()))
    if outcome.warning is not None:
        found.append(_warning(outcome.warning))
    return found


def _warning(text: str) -> tuple[bytes, bytes]:
    """A ``Warning`` header of the gateway's (RFC 9111 §5.5, code 199: miscellaneous)."""
    return (b"warning", f'199 tersify "{text}"'.encode())


def _observe(api: Api, outcome: RequestEdits, counts: Counts, seconds: float) -> None:
    """Count a prepared request in the metrics."""
    kind = "degraded" if outcome.warning else "rewritten" if outcome.edits else "unchanged"
    metrics.REQUESTS.labels(api.value, kind).inc()
    metrics.TOOL_RESULTS.labels("new").inc(outcome.rewritten - outcome.fallbacks)
    metrics.TOOL_RESULTS.labels("fallback").inc(outcome.fallbacks)
    metrics.TOOL_RESULTS.labels("reused").inc(outcome.reused)
    metrics.TOKENS.labels("before").inc(counts.tokens_before)
    metrics.TOKENS.labels("after").inc(counts.tokens_after)
    metrics.SAVED_USD.inc(max(0.0, counts.saved_usd))
    work = "new" if outcome.rewritten else "reused" if outcome.reused else "none"
    metrics.ADDED_SECONDS.labels(work).observe(seconds)


async def _answer(send: Any, status: int, content_type: bytes, body: bytes) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _error(send: Any, scope: Scope, status: int, message: str) -> None:
    """An error of the gateway's own, in the shape the client's SDK reads."""
    text = f"tersify gateway: {message}"
    refused = status < 500
    if is_anthropic(scope["path"], list(scope["headers"])):
        kind = {413: "request_too_large", 400: "invalid_request_error"}.get(status, "api_error")
        payload: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": text}}
    else:
        kind = "invalid_request_error" if refused else "server_error"
        payload = {"error": {"message": text, "type": kind, "param": None, "code": None}}
    await _answer(send, status, b"application/json", json.dumps(payload).encode())
