"""A real worker's Prometheus endpoint after a known workload, and the Redis-read gauges."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tersify.client import Producer
from tersify.contract import Method, Queue, SummaryResult
from tersify.settings import Settings
from tersify.store.redis_url import redis_client
from tersify.worker.cli.demo import load_examples
from tersify.worker.metrics.jobs import exported_names
from tersify.worker.metrics.state import StateCollector
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, status
from tests.helpers import free_port, wait_for
from tests.integration.conftest import provider_env, wait_for_cached_summaries

StartWorker = Callable[..., WorkerProcess]
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
EXAMPLES = [ex for ex in load_examples() if len(ex.output) > 2000][:4]


def parse(text: str) -> Samples:
    """Exposition text as {(sample name, labels): value}."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def total(samples: Samples, name: str, **labels: str) -> float:
    """Sum of the samples called ``name`` whose labels include ``labels``."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


def scrape(port: int) -> Samples:
    """One scrape of a worker's endpoint, on loopback."""
    response = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
    response.raise_for_status()
    return parse(response.text)


def submit_all(producer: Producer, marker: str = "", **kw: object) -> list[SummaryResult]:
    """Submit the bundled examples (with ``marker`` appended) and wait for every result."""
    handles = [
        producer.submit(
            tool_name=ex.tool_name,
            command=ex.command,
            output=ex.output + marker,
            **kw,  # type: ignore[arg-type]
        )
        for ex in EXAMPLES
    ]
    return [h.wait(30) for h in handles]


def test_a_worker_exports_what_a_known_workload_did(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    port = free_port()
    start_worker(
        **provider_env(fake_model, "anthropic"),
        metrics_port=str(port),
        model_max_attempts="1",
        circuit_failure_threshold="1",
        model_prices="claude-haiku-4-5-20251001=1/5",
    )
    fake_model.add_rule("FAIL-THIS-ONE", status(500))
    interactive = submit_all(producer, session_id="metrics-a")
    batch = submit_all(producer, "\n(batch)", session_id="metrics-b", queue=Queue.BATCH)
    failed = producer.submit(
        session_id="metrics-c",
        tool_name=EXAMPLES[0].tool_name,
        output=EXAMPLES[0].output + "FAIL-THIS-ONE",
    ).wait(30)
    done = [*interactive, *batch]
    assert all(r.method is Method.LLM for r in done), [(r.method, r.fallback_detail) for r in done]
    assert failed.method is Method.FALLBACK and failed.fallback_reason is not None

    m = scrape(port)
    n = len(EXAMPLES)
    assert total(m, "tersify_jobs_total", queue="interactive", method="llm", outcome="applied") == n
    assert total(m, "tersify_jobs_total", queue="batch", method="llm", outcome="applied") == n
    assert total(m, "tersify_jobs_total", queue="interactive", method="fallback") == 1
    for r in done:
        labels = {"queue": "interactive", "tool_type": r.tool_type.value, "method": "llm"}
        assert total(m, "tersify_jobs_total", **labels) >= 1
    assert total(m, "tersify_fallbacks_total") == 1
    assert total(m, "tersify_fallbacks_total", reason=failed.fallback_reason.value) == 1
    assert total(m, "tersify_job_duration_seconds_count", queue="interactive") == n + 1
    assert total(m, "tersify_job_duration_seconds_count", queue="batch") == n
    assert total(m, "tersify_job_queue_wait_seconds_count") == 2 * n + 1
    assert total(m, "tersify_job_processing_seconds_count", method="llm") == 2 * n
    assert total(m, "tersify_gate_hold_seconds_count") == n + 1
    everything = [*done, failed]
    assert total(m, "tersify_chars_total", direction="in") == sum(r.chars_in for r in everything)
    assert total(m, "tersify_chars_total", direction="out") == sum(r.chars_out for r in everything)

    tokens_in = sum(r.input_tokens or 0 for r in done)
    tokens_out = sum(r.output_tokens or 0 for r in done)
    assert tokens_in > 0 and tokens_out > 0
    model = done[0].model
    assert model == "claude-haiku-4-5-20251001"
    labels = {"provider": "anthropic", "model": model}
    assert total(m, "tersify_model_tokens_total", direction="in", **labels) == tokens_in
    assert total(m, "tersify_model_tokens_total", direction="out", **labels) == tokens_out
    cost = total(m, "tersify_model_cost_usd_total", **labels)
    assert abs(cost - (tokens_in * 1 + tokens_out * 5) / 1e6) < 1e-9

    # The 500 opened the circuit (threshold 1); the rest of the cluster state is idle again.
    assert total(m, "tersify_circuit_state", provider="anthropic", state="open") == 1
    assert total(m, "tersify_circuit_state", provider="openai", state="closed") == 1
    assert total(m, "tersify_redis_up") == 1
    assert total(m, "tersify_queue_depth", queue="interactive") == 0
    assert total(m, "tersify_gate_closed_sessions") == 0
    assert {name for name, _ in m} >= exported_names()


def test_a_second_identical_output_counts_as_a_cache_hit(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer, redis_client: Any
) -> None:
    port = free_port()
    start_worker(**provider_env(fake_model, "openai"), metrics_port=str(port))
    ex = EXAMPLES[0]
    first = producer.submit(session_id="cache", tool_name=ex.tool_name, output=ex.output).wait(30)
    wait_for_cached_summaries(redis_client, 1)
    second = producer.submit(session_id="cache", tool_name=ex.tool_name, output=ex.output).wait(30)
    assert (first.method, second.method) == (Method.LLM, Method.CACHE)
    m = scrape(port)
    assert total(m, "tersify_cache_hits_total") == 1
    assert total(m, "tersify_jobs_total", method="cache") == 1
    # A cache hit spends no tokens: only the first call is counted.
    assert total(m, "tersify_model_tokens_total", direction="in") == first.input_tokens


def test_the_state_gauges_read_queue_depth_and_the_gate_from_redis(
    settings: Settings, producer: Producer
) -> None:
    # No worker runs: the jobs stay queued and their sessions gated.
    for session in ("gauge-1", "gauge-2"):
        for ex in EXAMPLES[:2]:
            producer.submit(session_id=session, tool_name=ex.tool_name, output=ex.output)
    producer.submit(
        session_id="gauge-3", tool_name="bash", output=EXAMPLES[0].output, queue=Queue.BATCH
    )
    producer.gate.hold_input("gauge-1", "first message typed while gated")
    producer.gate.hold_input("gauge-1", "second")
    producer.gate.hold_input("gauge-2", "third")

    registry = CollectorRegistry()
    with redis_client(settings) as client:
        registry.register(StateCollector(client))
        m = parse(generate_latest(registry).decode())
    assert total(m, "tersify_queue_depth", queue="interactive") == 4
    assert total(m, "tersify_queue_depth", queue="batch") == 1
    assert total(m, "tersify_gate_closed_sessions") == 2
    assert total(m, "tersify_gate_held_inputs") == 3
    assert total(m, "tersify_gate_oldest_closed_seconds") >= 0
    assert total(m, "tersify_circuit_state", state="closed") == 2
    assert total(m, "tersify_redis_up") == 1


def _listening(port: int) -> set[str]:
    """Local addresses (hex, as /proc/net/tcp spells them) listening on ``port``."""
    found = set()
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        for line in table.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.rpartition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_the_worker_serves_metrics_on_loopback_only_by_default(start_worker: StartWorker) -> None:
    port = free_port()
    start_worker(metrics_port=str(port))
    assert wait_for(lambda: _answers(f"http://127.0.0.1:{port}/metrics"), "metrics served")
    assert _listening(port) == {"0100007F"}  # 127.0.0.1, not 0.0.0.0
