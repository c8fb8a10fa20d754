"""The API's connection limits (``tersify.worker.runtime.connections``): settings, counter."""

from __future__ import annotations

from typing import ClassVar

from prometheus_client import Counter

from tersify.settings import Settings
from tersify.worker.api.metrics import CLOSED
from tersify.worker.runtime.connections import ConnectionLimits, GuardedH11Protocol

PROTOCOL = "tersify.worker.api.connections:ApiProtocol"


def api_limits(settings: Settings) -> ConnectionLimits:
    """The API's limits: ``TERSIFY_API_MAX_CONNECTIONS`` and its read deadlines."""
    return ConnectionLimits.capped(
        settings.api_max_connections,
        settings.api_header_timeout_seconds,
        settings.api_body_timeout_seconds,
    )


class ApiProtocol(GuardedH11Protocol):
    """The API's guarded protocol: its closes counted in ``tersify_api_connections_closed``."""

    closed: ClassVar[Counter] = CLOSED
