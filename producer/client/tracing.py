"""Traces across submit → queue → worker → model: the OpenTelemetry API only.

The producer opens a ``tersify.submit`` span around each enqueue and carries its W3C trace
context (``traceparent``, ``tracestate``) in the broker message's headers; the worker continues
that trace. Without an SDK installed and configured (``tersify[otel]`` and the standard
``OTEL_*`` variables, or the backend's own provider) every call here is a no-op.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from opentelemetry import context, propagate, trace

from tersify.contract import PendingSummary

tracer = trace.get_tracer("tersify")
_NOTHING = nullcontext(trace.INVALID_SPAN)


def recording() -> bool:
    """Whether spans go anywhere: a tracer provider (an SDK's) is installed."""
    return not isinstance(
        trace.get_tracer_provider(), trace.ProxyTracerProvider | trace.NoOpTracerProvider
    )


def span(name: str, **options: Any) -> AbstractContextManager[trace.Span]:
    """``tracer.start_as_current_span(name, **options)`` when spans are recorded; else a shared
    do-nothing block (the no-op API's spans still cost a context switch each)."""
    return tracer.start_as_current_span(name, **options) if recording() else _NOTHING


def carrier() -> dict[str, str]:
    """The current trace context as W3C message headers (empty when nothing is traced)."""
    headers: dict[str, str] = {}
    propagate.inject(headers)
    return headers


def extract(headers: Mapping[str, object]) -> context.Context:
    """The trace context a message carried in its headers."""
    text = {k: v for k, v in headers.items() if isinstance(v, str)}
    return propagate.extract(text)


def job_attributes(job: PendingSummary) -> dict[str, str | int]:
    """What a job's spans say about it (never its output, command or query: they may hold
    secrets)."""
    return {
        "tersify.job_id": job.job_id,
        "tersify.session_id": job.session_id,
        "tersify.queue": job.queue.value,
        "tersify.tool_name": job.tool_name,
        "tersify.output_chars": len(job.output),
    }
