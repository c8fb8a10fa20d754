"""Request metrics for ``/metrics``: a counter and a latency histogram per route template.

Every label comes from a fixed set, whatever a client sends: methods outside the ones HTTP
defines read ``other``, paths that match no route ``unmatched``, statuses their class (``2xx``).
"""

from __future__ import annotations

import time
from typing import Final

from prometheus_client import Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

REQUESTS = Counter(
    "tersify_api_requests", "HTTP API requests answered.", ["method", "route", "status"]
)
LATENCY = Histogram(
    "tersify_api_request_duration_seconds",
    "HTTP API request latency (long-polls included).",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)

CLOSED = Counter(
    "tersify_api_connections_closed",
    "Client connections the API closed: past the cap, or too slow to send a request.",
    ["reason"],  # evicted | cap | header_timeout | body_timeout
)


def method_label(method: str) -> str:
    """The method as a label: one of ``METHODS``, else ``other``."""
    return method if method in METHODS else "other"


def status_label(status: int) -> str:
    """The status class as a label (``2xx`` … ``5xx``)."""
    return f"{status // 100}xx" if 100 <= status <= 599 else "5xx"


class RequestMetrics:
    """ASGI middleware counting requests by route template (never the raw path: ids in it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Time the request and count it with its status."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, observed)
        finally:
            # a route's template is one of the app's own strings, never the client's path
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = method_label(scope["method"])
            REQUESTS.labels(method, route, status_label(status)).inc()
            LATENCY.labels(method, route).observe(time.perf_counter() - started)
