"""Forwarding to the provider: the client's headers and body out, the provider's answer back.

Requests go to the configured upstreams and nowhere else: only an origin-form target (``/…``)
is taken, its path is normalized (dot segments resolved, ``%2E`` read as ``.``) and set as the
path under the upstream's own, on the upstream URL parsed once by httpx — the scheme, host and
port are the configured ones whatever the client sent.

The client's own headers go on as they came — its API key or bearer token included, never
logged or stored — except the hop-by-hop ones, ``Host`` and ``Content-Length`` (made anew for
the body actually sent). The answer is relayed as raw bytes (``aiter_raw``: a compressed body
stays compressed, an SSE stream goes on event by event as the provider sends it).
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote_to_bytes

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


def origin_path(raw_path: bytes) -> bytes | None:
    """The request target's path normalized (RFC 3986 §5.2.4: ``.`` and ``..`` segments
    resolved, never above the root), or None when the target is not in origin form (``/…``)."""
    if not raw_path.startswith(b"/"):
        return None
    kept: list[bytes] = []
    segments = raw_path[1:].split(b"/")
    for index, segment in enumerate(segments):
        dots = unquote_to_bytes(segment)
        last = index == len(segments) - 1
        if dots == b".":
            if last:
                kept.append(b"")
        elif dots == b"..":
            if kept:
                kept.pop()
            if last:
                kept.append(b"")
        else:
            kept.append(segment)
    return b"/" + b"/".join(kept)


class Upstream:
    """The providers' base URLs and one HTTP client for them, kept for the process."""

    def __init__(self, settings: Settings) -> None:
        self.anthropic = httpx.URL(settings.gateway_anthropic_upstream)
        self.openai = httpx.URL(settings.gateway_openai_upstream)
        timeout = httpx.Timeout(
            connect=CONNECT_SECONDS,
            read=settings.gateway_upstream_timeout_seconds,
            write=settings.gateway_upstream_timeout_seconds,
            pool=settings.gateway_upstream_timeout_seconds,
        )
        # No retries and no redirects: the client's SDK decides what to do with each answer.
        self.client = httpx.AsyncClient(timeout=timeout, follow_redirects=False)

    def url(self, path: bytes, query: bytes, headers: Headers) -> httpx.URL:
        """The provider URL for a normalized request ``path`` (``origin_path``) and its query:
        the path joined under the upstream's own, scheme, host and port the upstream's."""
        base = self.anthropic if is_anthropic(path.decode("latin-1"), headers) else self.openai
        joined = base.raw_path.partition(b"?")[0].rstrip(b"/") + path
        url = base.copy_with(raw_path=joined + (b"?" + query if query else b""))
        if (url.scheme, url.host, url.port) != (base.scheme, base.host, base.port):
            raise ValueError("the joined URL left the upstream")  # never: only the path is set
        return url

    def request(self, method: str, url: httpx.URL, headers: Headers, body: bytes) -> httpx.Request:
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
