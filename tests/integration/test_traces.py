"""Traces: one trace per job, from the producer's submit through the queue to the worker's model
call and store, across processes; nothing is traced when the OTEL_* variables are unset."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tersify.classify import classify
from tersify.client import Producer
from tersify.contract import Method
from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, ok
from tests.helpers import wait_for
from tests.integration.conftest import provider_env
from tests.otlp import OtlpReceiver, ReceivedSpan

LOG = "\n".join(f"line {i}: compiling module_{i}" for i in range(300)) + "\nerror: link failed\n"
WORKER_SPANS = {"tersify.job", "tersify.queue_wait", "tersify.store"}
_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module")
def producer_spans() -> InMemorySpanExporter:
    """This process's spans, kept in memory (the SDK's provider is set once per process)."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)
    return _EXPORTER


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    """A loopback OTLP collector."""
    with OtlpReceiver() as started:
        yield started


def test_each_job_is_one_trace_from_submit_through_the_worker_to_the_model_and_store(
    producer_spans: InMemorySpanExporter,
    receiver: OtlpReceiver,
    start_worker: Callable[..., WorkerProcess],
    settings: Settings,
    fake_model: FakeModelServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    producer_spans.clear()
    fake_model.set_default(ok())
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "tersify-worker-under-test")
    worker = start_worker(**provider_env(fake_model, "anthropic"))
    with Producer(settings) as producer:
        results = [
            producer.submit(session_id=f"t-{n}", tool_name="bash", output=f"{LOG}{n}").wait(30)
            for n in range(3)
        ]
    assert all(r.method is Method.LLM for r in results)
    submits = {
        s.attributes["tersify.job_id"]: s
        for s in producer_spans.get_finished_spans()
        if s.name == "tersify.submit"
    }
    assert set(submits) == {r.job_id for r in results}
    traces = {f"{s.context.trace_id:032x}": s for s in submits.values()}
    assert len(traces) == 3  # one trace per job

    def worker_spans() -> dict[str, list[ReceivedSpan]]:
        by_trace: dict[str, list[ReceivedSpan]] = {t: [] for t in traces}
        for span in receiver.snapshot():
            by_trace.setdefault(span.trace_id, []).append(span)
        complete = all({s.name for s in spans} >= WORKER_SPANS for spans in by_trace.values())
        return by_trace if complete else {}

    by_trace = wait_for(worker_spans, "the worker's spans", timeout=30)
    assert set(by_trace) == set(traces)  # no worker span outside the jobs' traces
    for trace_id, spans in by_trace.items():
        submit = traces[trace_id]
        names = {s.name: s for s in spans}
        assert names["tersify.job"].parent_id == f"{submit.context.span_id:016x}"
        job_span_id = names["tersify.job"].span_id
        model = names["chat claude-haiku-4-5-20251001"]
        for child in ("tersify.queue_wait", "tersify.store"):
            assert names[child].parent_id == job_span_id
        assert model.parent_id == job_span_id
        assert model.attributes["gen_ai.provider.name"] == "anthropic"
        assert model.attributes["gen_ai.usage.input_tokens"] > 0
        assert model.attributes["gen_ai.usage.output_tokens"] > 0
        assert (
            names["tersify.job"].attributes["tersify.job_id"] == submit.attributes["tersify.job_id"]
        )
        assert names["tersify.job"].attributes["tersify.tool_type"] == classify("bash", None, LOG)
        assert {s.service for s in spans} == {"tersify-worker-under-test"}
    assert worker.alive()


def test_without_otel_variables_a_worker_exports_nothing(
    start_worker: Callable[..., WorkerProcess],
    producer: Producer,
    receiver: OtlpReceiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER"):
        monkeypatch.delenv(name, raising=False)
    worker = start_worker()
    assert producer.submit(session_id="quiet", tool_name="bash", output=LOG).wait(30)
    worker.stop()
    assert "tracing_configured" not in worker.log()
    assert receiver.snapshot() == []
