"""Forwarding to the provider: the client's headers and body out, the provider's answer back.

The client's own headers go on as they came — its API key or bearer token included, never
logged or stored — except the hop-by-hop ones, ``Host`` and ``Content-Length`` (made anew for
the body actually sent). The answer is relayed as raw bytes (``aiter_raw``: a compressed body
stays compressed, an SSE stream goes on event by event as the provider sends it).
"""

from __future__ import annotations

from typing import Final

import httpx

from tersify.settings import Settings
from tersify.worker.gateway.formats import Api

# RFC 9110 §7.6.1 connection-specific fields, and what the gateway recomputes.
_NOT_FORWARDED: Final = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
        b"content-length",
    }
)
_NOT_RELAYED: Final = _NOT_FORWARDED - {b"content-length"}
CONNECT_SECONDS: Final = 10.0

Headers = list[tuple[bytes, bytes]]


def forwarded(headers: Headers) -> Headers:
    """The request headers that go on to the provider."""
    return [(name, value) for name, value in headers if name.lower() not in _NOT_FORWARDED]


def relayed(headers: Headers) -> Headers:
    """The response headers that go back to the client."""
    return [(name, value) for name, value in headers if name.lower() not in _NOT_RELAYED]


def route(method: str, path: str) -> Api | None:
    """The wire format of a request the gateway rewrites; None for one it only forwards."""
    if method != "POST":
        return None
    return {
        "/v1/messages": Api.ANTHROPIC,
        "/v1/messages/count_tokens": Api.ANTHROPIC,
        "/v1/chat/completions": Api.OPENAI_CHAT,
        "/v1/responses": Api.OPENAI_RESPONSES,
    }.get(path)


def is_anthropic(path: str, headers: Headers) -> bool:
    """Whether a request is for the Anthropic API: its path, else its version header."""
    if path.startswith("/v1/messages"):
        return True
    return any(name.lower() == b"anthropic-version" for name, _ in headers)


class Upstream:
    """The providers' base URLs and one HTTP client for them, kept for the process."""

    def __init__(self, settings: Settings) -> None:
        self.anthropic = settings.gateway_anthropic_upstream.rstrip("/")
        self.openai = settings.gateway_openai_upstream.rstrip("/")
        timeout = httpx.Timeout(
            connect=CONNECT_SECONDS,
            read=settings.gateway_upstream_timeout_seconds,
            write=settings.gateway_upstream_timeout_seconds,
            pool=settings.gateway_upstream_timeout_seconds,
        )
        # No retries and no redirects: the client's SDK decides what to do with each answer.
        self.client = httpx.AsyncClient(timeout=timeout, follow_redirects=False)

    def url(self, path_and_query: str, headers: Headers) -> str:
        """The provider URL for a request path (and query) the client sent."""
        base = self.anthropic if is_anthropic(path_and_query, headers) else self.openai
        return base + path_and_query

    def request(self, method: str, url: str, headers: Headers, body: bytes) -> httpx.Request:
        """The request to send on: the client's headers, and none of httpx's own defaults (an
        ``Accept-Encoding`` the client did not send would change the answer it gets)."""
        kept = forwarded(headers)
        request = self.client.build_request(method, url, headers=kept, content=body)
        sent = {name.lower() for name, _ in kept} | {b"host", b"content-length"}
        for name in [n for n in request.headers.raw if n[0].lower() not in sent]:
            del request.headers[name[0].decode("latin-1")]
        return request

    async def close(self) -> None:
        """Close the client's connections."""
        await self.client.aclose()
