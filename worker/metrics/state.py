"""The Prometheus collector of the cluster's state, read from Redis each time Prometheus scrapes.

Every worker exports the same values: dashboards and alerts aggregate them with ``max``.
"""

from __future__ import annotations

from collections.abc import Iterator

import redis
import structlog
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from tersify.worker.metrics import rereads
from tersify.worker.metrics import snapshot as snap

log = structlog.get_logger("tersify.metrics")

# What the scrape-time collector exports; the dashboard test checks panels against these too.
STATE_GAUGES: dict[str, str] = {
    "tersify_queue_depth": "Messages waiting in each queue.",
    "tersify_jobs_in_flight": "Messages delivered to workers (running or reserved), not yet acked.",
    "tersify_gate_closed_sessions": "Sessions whose input gate is closed now.",
    "tersify_gate_held_inputs": "User inputs held behind closed gates now.",
    "tersify_gate_oldest_closed_seconds": "How long the longest-closed gate has been closed.",
    "tersify_circuit_state": "1 for each provider's current circuit state (closed/open/probing).",
    "tersify_redis_up": "1 when this scrape could read Redis.",
}

# Counters kept in Redis (cluster-wide, every worker exports the same values: aggregate with max),
# by the summary's tool type and method; exported with the ``_total`` suffix.
STATE_COUNTERS: dict[str, str] = {
    "tersify_summaries": "Summaries stored by workers since Redis began counting.",
    "tersify_rereads": "Reads of the full output behind a summary (tersify output, the API, "
    "tersify_read, Producer.read_output).",
    "tersify_reread_summaries": "Summaries whose full output was read back at least once.",
}


class StateCollector(Collector):
    """Reads queue depths, the gate and the circuits from Redis when Prometheus scrapes."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client

    def describe(self) -> Iterator[Metric]:
        """The families this collector exports (without reading Redis)."""
        for name, doc in STATE_GAUGES.items():
            yield GaugeMetricFamily(name, doc)
        for name, doc in STATE_COUNTERS.items():
            yield CounterMetricFamily(name, doc, labels=["tool_type", "method"])

    def collect(self) -> Iterator[Metric]:
        """One bounded read of the cluster's state; only ``tersify_redis_up`` 0 on failure."""
        up = GaugeMetricFamily("tersify_redis_up", STATE_GAUGES["tersify_redis_up"])
        try:
            families = list(self._read())
        except redis.RedisError as exc:
            log.warning("metrics_state_read_failed", error=type(exc).__name__)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from families

    def _read(self) -> Iterator[Metric]:
        client = self._client
        now = snap.server_now(client)
        depth = GaugeMetricFamily(
            "tersify_queue_depth", STATE_GAUGES["tersify_queue_depth"], labels=["queue"]
        )
        for queue, n in snap.queue_depths(client).items():
            depth.add_metric([queue], n)
        yield depth
        yield GaugeMetricFamily(
            "tersify_jobs_in_flight",
            STATE_GAUGES["tersify_jobs_in_flight"],
            value=snap.in_flight(client),
        )
        sessions = snap.gated_sessions(client, now)
        for name, value in (
            ("tersify_gate_closed_sessions", len(sessions)),
            ("tersify_gate_held_inputs", sum(s.held_inputs for s in sessions)),
            (
                "tersify_gate_oldest_closed_seconds",
                max((s.closed_seconds for s in sessions), default=0),
            ),
        ):
            yield GaugeMetricFamily(name, STATE_GAUGES[name], value=value)
        circuit = GaugeMetricFamily(
            "tersify_circuit_state",
            STATE_GAUGES["tersify_circuit_state"],
            labels=["provider", "state"],
        )
        for provider, state in snap.circuit_states(client).items():
            for candidate in snap.CIRCUIT_STATES:
                circuit.add_metric([provider, candidate], 1 if state == candidate else 0)
        yield circuit
        yield from _reread_counters(client)


def _reread_counters(client: redis.Redis) -> Iterator[Metric]:
    families = {
        name: CounterMetricFamily(name, doc, labels=["tool_type", "method"])
        for name, doc in STATE_COUNTERS.items()
    }
    for kind in rereads.kinds(client):
        labels = [kind.tool_type, kind.method]
        families["tersify_summaries"].add_metric(labels, kind.summaries)
        families["tersify_rereads"].add_metric(labels, kind.reads)
        families["tersify_reread_summaries"].add_metric(labels, kind.reread)
    yield from families.values()
