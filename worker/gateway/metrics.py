"""The gateway's Prometheus metrics, served at ``/tersify/metrics`` on its own port.

Labels come from fixed sets: the wire format, what happened to a request, where a tool result's
replacement came from.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

REQUESTS = Counter(
    "tersify_gateway_requests",
    "Requests the gateway forwarded, by wire format and what it did to them.",
    ["api", "outcome"],  # rewritten | unchanged | degraded | forwarded | refused | failed
)
TOOL_RESULTS = Counter(
    "tersify_gateway_tool_results",
    "Large tool results, by where their replacement came from.",
    ["source"],  # new | reused | fallback
)
TOKENS = Counter(
    "tersify_gateway_tokens",
    "Estimated input tokens of rewritten-format requests, as sent by the client and as forwarded.",
    ["stage"],  # before | after
)
SAVED_USD = Counter(
    "tersify_gateway_saved_usd",
    "Estimated input cost saved at the request's model list price (TERSIFY_MODEL_PRICES).",
)
ADDED_SECONDS = Histogram(
    "tersify_gateway_added_seconds",
    "Time the gateway added before forwarding a request, by what the request needed.",
    ["work"],  # none | reused | new
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
DISCONNECTS = Counter(
    "tersify_gateway_client_disconnects",
    "Clients that went away before their answer was complete.",
)
CLOSED = Counter(
    "tersify_gateway_connections_closed",
    "Client connections the gateway closed: past the cap, or too slow to send a request.",
    ["reason"],  # evicted | cap | header_timeout | body_timeout
)
