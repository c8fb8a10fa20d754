"""The worker's trace pipeline: the OpenTelemetry SDK, set up from the standard ``OTEL_*``
variables when they ask for traces, else nothing (the API stays a no-op).

``OTEL_TRACES_EXPORTER`` (``otlp``, the default once an ``OTEL_EXPORTER_OTLP_*ENDPOINT`` is
set, or ``console``) chooses the exporter; the OTLP exporter reads its endpoint, headers and
timeouts from the ``OTEL_EXPORTER_OTLP_*`` variables itself; ``OTEL_SERVICE_NAME`` names the
service (default ``tersify-worker``). The SDK ships in the ``tersify[otel]`` extra.
"""

from __future__ import annotations

import structlog
from opentelemetry import trace

from tersify.settings import Settings

log = structlog.get_logger("tersify.tracing")

SERVICE_NAME = "tersify-worker"


def configure_tracing(settings: Settings) -> bool:
    """Install a tracer provider exporting spans, if the environment asks; True when it did."""
    exporter_name = settings.traces_exporter()
    if exporter_name is None:
        return False
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            ConsoleSpanExporter,
            SpanExporter,
        )
    except ImportError:
        log.warning(
            "tracing_unavailable",
            hint="the otel extra: pip install -e '.[otel]' in a tersify checkout, or the wheel "
            "built there with [otel] (README: Install)",
        )
        return False
    exporter: SpanExporter
    if exporter_name == "console":
        exporter = ConsoleSpanExporter()
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource.create({"service.name": SERVICE_NAME}))
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    log.info("tracing_configured", exporter=exporter_name)
    return True
