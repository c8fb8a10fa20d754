"""The gateway's connection limits: the API's mechanism (``tersify.worker.runtime.connections``)
with the gateway's settings and its own counter of closes."""

from __future__ import annotations

from typing import ClassVar

from prometheus_client import Counter

from tersify.settings import Settings
from tersify.worker.gateway.metrics import CLOSED
from tersify.worker.runtime.connections import ConnectionLimits, GuardedH11Protocol


def gateway_limits(settings: Settings) -> ConnectionLimits:
    """``TERSIFY_GATEWAY_MAX_CONNECTIONS`` (within the descriptor limit) and the read deadlines."""
    return ConnectionLimits.capped(
        settings.gateway_max_connections,
        settings.gateway_header_timeout_seconds,
        settings.gateway_body_timeout_seconds,
    )


class GatewayProtocol(GuardedH11Protocol):
    """The gateway's guarded protocol: closes counted in ``tersify_gateway_connections_closed``."""

    closed: ClassVar[Counter] = CLOSED
