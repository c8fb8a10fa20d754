"""What a worker process holds for its whole life: clients, providers, session log, scheduler.

Built once per process on first use (Celery's prefork children get their own after the fork),
never at import and never per task. Building starts nothing: the chores are started by their
one owner, ``worker.broker.signals``, when the worker is ready.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from redis import Redis

from tersify.gate import SessionGate
from tersify.settings import Scope, Settings
from tersify.store.redis_url import redis_client
from tersify.worker.model.calls import Route
from tersify.worker.model.providers import (
    compaction_provider,
    make_provider,
    summary_provider,
)
from tersify.worker.model.routes import route
from tersify.worker.runtime.scheduler import Scheduler
from tersify.worker.store.sessionlog import SessionLog
from tersify.worker.store.writebehind import WriteBehind
from tersify.worker.summarize.cache import ResultCache


@dataclass
class Runtime:
    """Per-process long-lived state of a worker."""

    settings: Settings
    redis: Redis
    gate_redis: Redis
    gate: SessionGate
    routes: list[Route]
    cache: ResultCache
    compaction_routes: list[Route]
    session_log: SessionLog
    scheduler: Scheduler
    writes: WriteBehind
    redaction: frozenset[Scope]  # TERSIFY_REDACT, as the settings parsed it

    @classmethod
    def build(cls, settings: Settings) -> Runtime:
        """Make the clients (connections open on first use); start nothing."""
        client = redis_client(settings)
        writes = WriteBehind(client)
        gate_client = redis_client(settings, decode=True)
        gate = SessionGate(gate_client, settings)
        summary = summary_provider(settings)
        provider = make_provider(settings, summary, pool_size=settings.worker_concurrency)
        routes = [route(settings, client, provider, writes)] if provider is not None else []
        spare = settings.failover_provider
        if routes and spare is not None and spare != summary:
            second = make_provider(settings, spare, pool_size=settings.worker_concurrency)
            if second is not None:
                routes.append(route(settings, client, second, writes))
        compaction_routes = compaction_route_list(settings, client, routes, writes)
        redaction = settings.redact
        log = SessionLog(
            settings.session_log_dir,
            client,
            marker_ttl=settings.result_ttl_seconds,
            redact=redaction,
            max_bytes=settings.session_log_max_bytes,
            retention_days=settings.session_log_retention_days,
        )
        scheduler = Scheduler(gate, settings)
        cache = ResultCache(settings.cache_ttl_seconds, writes)
        return cls(
            settings,
            client,
            gate_client,
            gate,
            routes,
            cache,
            compaction_routes,
            log,
            scheduler,
            writes,
            redaction,
        )

    def close(self) -> None:
        """Stop the scheduler and close every client."""
        self.scheduler.stop()
        self.writes.close()
        for r in self.routes:
            r.provider.close()
        for r in self.compaction_routes:
            if all(r.provider is not s.provider for s in self.routes):
                r.provider.close()
        self.redis.close()
        self.gate_redis.close()


def compaction_route_list(
    settings: Settings, client: Redis, routes: list[Route], writes: WriteBehind
) -> list[Route]:
    """Compaction's routes: the summary routes when it uses the same provider and model, else
    its own provider (same shared breaker and rate limit by provider name) and the failover."""
    name = compaction_provider(settings)
    if name == summary_provider(settings) and settings.compaction_model is None:
        return routes
    pool_size = max(1, settings.worker_concurrency // 4)
    provider = make_provider(settings, name, pool_size=pool_size, model=settings.compaction_model)
    if provider is None:
        return []
    spares = [r for r in routes[1:] if r.provider.name != provider.name]
    return [route(settings, client, provider, writes), *spares]


_lock = threading.Lock()
_runtime: Runtime | None = None


def get_runtime(settings: Settings) -> Runtime:
    """This process's runtime, built from ``settings`` on first use."""
    global _runtime
    with _lock:
        if _runtime is None:
            _runtime = Runtime.build(settings)
        return _runtime


def current_runtime() -> Runtime | None:
    """This process's runtime if one was built, without building one."""
    return _runtime


def reset_runtime(*, close: bool = True) -> None:
    """Forget this process's runtime; close it at shutdown, not in a freshly forked child."""
    global _runtime
    with _lock:
        if _runtime is not None and close:
            _runtime.close()
        _runtime = None
