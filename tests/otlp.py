"""A loopback OTLP/HTTP trace receiver: what a collector would get from a worker's exporter."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class ReceivedSpan:
    """One exported span, its ids as hex."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    service: str
    attributes: dict[str, Any] = field(default_factory=dict)


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class OtlpReceiver:
    """Accepts ``POST /v1/traces`` (protobuf) on a free loopback port and keeps every span."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.take(ExportTraceServiceRequest.FromString(body))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """``OTEL_EXPORTER_OTLP_ENDPOINT`` for this receiver."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def take(self, request: ExportTraceServiceRequest) -> None:
        """Keep the spans of one export."""
        found = []
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    found.append(
                        ReceivedSpan(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            service=str(resource.get("service.name")),
                            attributes={a.key: _value(a.value) for a in span.attributes},
                        )
                    )
        with self._lock:
            self.spans.extend(found)

    def snapshot(self) -> list[ReceivedSpan]:
        """The spans received so far."""
        with self._lock:
            return list(self.spans)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
