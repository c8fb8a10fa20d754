"""Prometheus metrics of a worker: job counters fed where results are stored, Redis state at scrape.

Job metrics (counts, latencies, tokens, cost, fallbacks) live in the process that ran the job,
so one HTTP endpoint per worker process is correct for the ``threads``, ``gevent`` and ``solo``
pools. Under ``prefork`` the jobs run in children the endpoint cannot see: only the Redis-read
gauges are right there (docs/OPERATIONS.md). The Redis gauges (queue depth, gate, circuits) are
read when Prometheus scrapes, so every worker reports the same cluster-wide values: aggregate
them with ``max``, never ``sum``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Mapping
from functools import cache
from typing import Any

import redis
import structlog
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

from tersify.chat.compaction import CompactionMethod, CompactionResult
from tersify.client import rereads, tenants
from tersify.contract import DeadLetterReason, Method, Queue, SummaryResult
from tersify.gate import CompletionOutcome
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.metrics.state import STATE_COUNTERS, STATE_GAUGES, StateCollector
from tersify.worker.model.pricing import cost
from tersify.worker.redact import KINDS
from tersify.worker.store.writebehind import WriteBehind

log = structlog.get_logger("tersify.metrics")

REGISTRY = CollectorRegistry(auto_describe=True)
"""The worker's own registry: only ``tersify_*`` metrics, nothing a library registers."""

# Recent finishes older than this are trimmed; `tersify status` asks for at most this window.
# The trim runs every TRIM_SECONDS, so the set may pass its cap by that many seconds of finishes.
RECENT_WINDOW_SECONDS = 900
RECENT_COMPLETIONS_KEEP = 50_000
TRIM_SECONDS = 10.0
_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300)

JOBS = Counter(
    "tersify_jobs",
    "Jobs finished, by queue, tool type, how the text was made, how the result was stored and "
    "tenant (configured names only; empty without one).",
    ["queue", "tool_type", "method", "outcome", "tenant"],
    registry=REGISTRY,
)
JOB_DURATION = Histogram(
    "tersify_job_duration_seconds",
    "Submission to stored result.",
    ["queue"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
QUEUE_WAIT = Histogram(
    "tersify_job_queue_wait_seconds",
    "Submission to a worker starting the job.",
    ["queue"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
PROCESSING = Histogram(
    "tersify_job_processing_seconds",
    "A worker starting the job to its stored result; with method=llm, mostly model time.",
    ["queue", "method"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
TOKENS = Counter(
    "tersify_model_tokens",
    "Model tokens as the provider reported them, by direction (in, out).",
    ["provider", "model", "direction"],
    registry=REGISTRY,
)
COST = Counter(
    "tersify_model_cost_usd",
    "Estimated model spend from TERSIFY_MODEL_PRICES (0 for unpriced models), by tenant.",
    ["provider", "model", "tenant"],
    registry=REGISTRY,
)
FALLBACKS = Counter(
    "tersify_fallbacks",
    "Jobs that ended in the fallback, by reason.",
    ["reason"],
    registry=REGISTRY,
)
CHARS = Counter(
    "tersify_chars",
    "Characters of tool output in and of summary out.",
    ["direction"],
    registry=REGISTRY,
)
CACHE_HITS = Counter(
    "tersify_cache_hits", "Jobs answered from the summary cache.", registry=REGISTRY
)
DEAD_LETTERS = Counter(
    "tersify_dead_letters",
    "Queue entries a worker refused and kept in the dead-letter list, by reason.",
    ["reason"],
    registry=REGISTRY,
)
for _reason in DeadLetterReason:  # every reason exported from the start, at 0: rate() works
    DEAD_LETTERS.labels(_reason.value)
GATE_HOLD = Histogram(
    "tersify_gate_hold_seconds",
    "How long one interactive job kept its session's gate closed (submission to release).",
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)

REDACTIONS = Counter(
    "tersify_redactions",
    "Secrets replaced by placeholders, by kind (aws_access_key, password, jwt, ...).",
    ["kind"],
    registry=REGISTRY,
)
for _kind in KINDS:
    REDACTIONS.labels(_kind)


COMPACTIONS = Counter(
    "tersify_compactions",
    "Compactions finished, by method and why (the fallback or passthrough reason, else none).",
    ["method", "reason"],
    registry=REGISTRY,
)
for _method in CompactionMethod:  # exported from the start, at 0: rate() works
    COMPACTIONS.labels(_method.value, "none")

JOB_METRICS = (
    JOBS,
    JOB_DURATION,
    QUEUE_WAIT,
    PROCESSING,
    TOKENS,
    COST,
    FALLBACKS,
    CHARS,
    CACHE_HITS,
    DEAD_LETTERS,
    GATE_HOLD,
    REDACTIONS,
    COMPACTIONS,
)


def observe(
    writes: WriteBehind,
    settings: Settings,
    result: SummaryResult,
    outcome: CompletionOutcome,
    gated: bool,
) -> None:
    """Count one stored result; ``gated``: it held a session's gate (the interactive queue)."""
    queue = Queue.INTERACTIVE.value if gated else Queue.BATCH.value
    tenant = tenants.label(settings.tenants, result.tenant)
    method = result.method.value
    _child(JOBS, queue, result.tool_type.value, method, outcome.value, tenant).inc()
    total = (result.finished_at - result.queued_at).total_seconds()
    wait = (result.started_at - result.queued_at).total_seconds()
    _child(JOB_DURATION, queue).observe(max(0.0, total))
    _child(QUEUE_WAIT, queue).observe(max(0.0, wait))
    _child(PROCESSING, queue, method).observe(max(0.0, total - wait))
    if gated:
        GATE_HOLD.observe(max(0.0, total))
    _child(CHARS, "in").inc(result.chars_in)
    _child(CHARS, "out").inc(result.chars_out)
    if result.method is Method.CACHE:
        CACHE_HITS.inc()
    if result.fallback_reason is not None:
        _child(FALLBACKS, result.fallback_reason.value).inc()
    if result.provider and result.model and result.method is Method.LLM:
        _count_tokens(writes, settings, result, tenant)
    _remember(writes, settings, result, queue)


_children: dict[tuple[int, tuple[str, ...]], Any] = {}


def _child(metric: Any, *labels: str) -> Any:
    """``metric.labels(*labels)``, looked up once per label set (the registry keeps every child
    anyway; finding it again through ``labels`` costs a lock and checks on every job)."""
    key = (id(metric), labels)
    child = _children.get(key)
    if child is None:
        child = _children[key] = metric.labels(*labels)
    return child


def count_redactions(counts: Mapping[str, int]) -> None:
    """Count one job's redactions by kind (the kind is a rule's name, never a value)."""
    for kind, count in counts.items():
        REDACTIONS.labels(kind).inc(count)


def observe_compaction(writes: WriteBehind, settings: Settings, result: CompactionResult) -> None:
    """Count one finished compaction, and the model's tokens and cost when it was called."""
    reason = result.fallback_reason or result.passthrough_reason
    COMPACTIONS.labels(result.method.value, reason.value if reason else "none").inc()
    if result.provider and result.model:
        _count_tokens(writes, settings, result, "")


def _count_tokens(
    writes: WriteBehind, settings: Settings, result: SummaryResult | CompactionResult, tenant: str
) -> None:
    provider, model = str(result.provider), str(result.model)
    tokens_in, tokens_out = result.input_tokens or 0, result.output_tokens or 0
    TOKENS.labels(provider, model, "in").inc(tokens_in)
    TOKENS.labels(provider, model, "out").inc(tokens_out)
    usd = cost(settings, model, tokens_in, tokens_out)
    COST.labels(provider, model, tenant).inc(usd)
    if tenant and usd > 0:  # the day's spend a tenant's quota is checked against
        writes.submit(lambda pipe: tenants.add_spend(pipe, tenant, usd, result.finished_at))


class Completions:
    """The shared counts of this process's applied results (a late result is no second
    summary), written about once a second whatever the number of jobs (``WriteBehind.every``):
    the re-read share's denominator (one ``HINCRBY`` per kind) and the record of recent finishes
    that ``tersify status`` reads from any host (one ``ZADD``; ``trim_recent`` keeps it
    bounded). Its members name this process and a count, never a job or a session, so nothing
    of a forgotten session can land after it. A crash loses at most a second of them."""

    def __init__(self, writes: WriteBehind) -> None:
        self._writes = writes
        writes.every(self.write)
        self._lock = threading.Lock()
        self._kinds: dict[str, int] = {}
        self._finished: dict[str, float] = {}
        self._mark = uuid.uuid4().hex[:12]
        self._count = 0

    def add(self, result: SummaryResult) -> None:
        """Count one applied result."""
        kind = rereads.field(result.tool_type.value, result.method.value)
        with self._lock:
            self._kinds[kind] = self._kinds.get(kind, 0) + 1
            self._count += 1
            self._finished[f"{self._mark}:{self._count}"] = result.finished_at.timestamp()
        self._writes.running()

    @staticmethod
    @cache
    def of(writes: WriteBehind) -> Completions:
        """The one accumulator sent through ``writes`` (one per process)."""
        return Completions(writes)

    def write(self, pipe: Any) -> None:
        """Queue what accumulated since the last call on ``pipe``."""
        with self._lock:
            kinds, self._kinds = self._kinds, {}
            finished, self._finished = self._finished, {}
        for kind, count in kinds.items():
            pipe.hincrby(keys.SUMMARIES, kind, count)
        if finished:
            pipe.zadd(keys.RECENT_COMPLETIONS, finished)


def trim_recent(client: redis.Redis) -> None:
    """Drop recent finishes past the window, and the oldest past the cap (a worker's chore)."""
    now = time.time()
    with client.pipeline(transaction=False) as pipe:
        pipe.zremrangebyscore(keys.RECENT_COMPLETIONS, "-inf", now - RECENT_WINDOW_SECONDS)
        pipe.zremrangebyrank(keys.RECENT_COMPLETIONS, 0, -RECENT_COMPLETIONS_KEEP - 1)
        pipe.execute()


def _remember(writes: WriteBehind, settings: Settings, result: SummaryResult, queue: str) -> None:
    # The recent fallbacks `tersify status` lists, capped. Written behind the job (within
    # ~20 ms): a record lost to a crash only thins the list.
    if result.fallback_reason is None:
        return
    fallback = json.dumps(
        {
            "job_id": result.job_id,
            "session_id": result.session_id,
            "queue": queue,
            "tool_type": result.tool_type.value,
            "provider": result.provider,
            "reason": result.fallback_reason.value,
            "detail": (result.fallback_detail or "")[:200],
            "at": result.finished_at.timestamp(),
        }
    )
    keep_fallbacks = settings.metrics_recent_fallbacks

    def write(pipe: Any) -> None:
        pipe.lpush(keys.RECENT_FALLBACKS, fallback)
        pipe.ltrim(keys.RECENT_FALLBACKS, 0, keep_fallbacks - 1)

    writes.submit(write)


_started_lock = threading.Lock()
_state_collector: StateCollector | None = None


def start_server(settings: Settings, client: redis.Redis, pool: str) -> bool:
    """Serve ``/metrics`` on ``settings.metrics_port`` (0: off); False when it did not start.

    ``pool`` names the worker's pool (class or name): under prefork the job counters stay in the
    children, so only the Redis-read gauges are right.
    """
    global _state_collector
    if settings.metrics_port == 0:
        return False
    with _started_lock:
        if _state_collector is None:
            _state_collector = StateCollector(client)
            REGISTRY.register(_state_collector)
    if "prefork" in pool:
        log.warning("metrics_job_counters_unavailable", pool=pool, reason="jobs run in children")
    try:
        start_http_server(settings.metrics_port, addr=settings.metrics_host, registry=REGISTRY)
    except OSError as exc:
        log.warning("metrics_server_failed", port=settings.metrics_port, error=str(exc))
        return False
    log.info("metrics_server_started", host=settings.metrics_host, port=settings.metrics_port)
    return True


def exported_names() -> set[str]:
    """Every series name this worker can export (``_total``, ``_bucket``... included)."""
    names = set(STATE_GAUGES) | {name + "_total" for name in STATE_COUNTERS}
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count")}
    for metric in JOB_METRICS:
        for family in metric.describe():
            names |= {family.name + s for s in suffixes.get(family.type, ("",))}
    return names
