"""The worker process's life, on Celery's signals: logging, the runtime, and every chore.

``_worker_ready`` is the one place a worker process starts its periodic chores (heartbeat,
expired-lease sweep, redelivery of dead workers' jobs, logging passthrough outputs, trimming the
record of recent finishes) and its
metrics endpoint, all on the
runtime's scheduler thread. A forked prefork child only drops its parent's clients: it builds
its own runtime on its first job, and its scheduler runs only that job's lease renewals.
"""

from __future__ import annotations

import time
from typing import Any

from celery import Celery, current_app, signals

from tersify.worker.broker.redelivery import restore_abandoned, restore_interval
from tersify.worker.jobs.sweeper import sweep_once
from tersify.worker.jobs.webhooks import WebhookSender
from tersify.worker.metrics.jobs import TRIM_SECONDS, trim_recent
from tersify.worker.metrics.jobs import start_server as start_metrics
from tersify.worker.runtime.heartbeat import HEARTBEAT_SECONDS, beat
from tersify.worker.runtime.heartbeat import clear as clear_heartbeat
from tersify.worker.runtime.logconfig import configure_logging
from tersify.worker.runtime.runtime import Runtime, current_runtime, get_runtime, reset_runtime
from tersify.worker.runtime.tracing import configure_tracing
from tersify.worker.store.passthroughs import PassthroughLog

# How often a worker moves queued passthrough outputs into the session log.
PASSTHROUGH_LOG_SECONDS = 1.0

PRUNE_SECONDS = 3600.0
_sender: WebhookSender | None = None  # this process's webhook sender, when webhooks are on


def start_chores(rt: Runtime, app: Celery, hostname: str, pool: str) -> None:
    """Start every periodic chore of a worker process, once, on its scheduler."""
    started = time.time()
    queues = consumed_queues(app)
    beat(rt, hostname, started, queues)
    rt.scheduler.every(HEARTBEAT_SECONDS, lambda: beat(rt, hostname, started, queues), "heartbeat")
    rt.scheduler.every(rt.settings.gate_sweep_interval_seconds, lambda: sweep_once(rt), "sweep")
    rt.scheduler.every(restore_interval(rt.settings), lambda: restore_abandoned(app), "redelivery")
    rt.scheduler.every(PRUNE_SECONDS, rt.session_log.prune, "prune")  # session log retention
    rt.scheduler.every(TRIM_SECONDS, lambda: trim_recent(rt.redis), "trim_recent")
    passthroughs = PassthroughLog(rt.redis, rt.session_log)
    rt.scheduler.every(PASSTHROUGH_LOG_SECONDS, passthroughs.drain, "passthrough_log")
    start_metrics(rt.settings, rt.redis, pool)
    if rt.settings.webhook_secret is not None:
        global _sender
        _sender = WebhookSender(rt.redis, rt.settings, rt.settings.webhook_secret).start()


def consumed_queues(app: Celery) -> list[str]:
    """The names of the queues this worker takes jobs from (its ``--queues``)."""
    return sorted(str(name) for name in app.amqp.queues.consume_from)


@signals.setup_logging.connect
def _setup_logging(**_: Any) -> None:
    # Connecting this signal stops Celery from configuring logging behind structlog's back.
    configure_logging(current_app.conf.tersify_settings)


@signals.worker_init.connect
def _worker_init(sender: Any = None, **_: Any) -> None:
    # Before any job runs and before prefork children fork (the SDK re-arms in each child).
    configure_tracing(current_app.conf.tersify_settings)


@signals.worker_process_init.connect
def _child_started(**_: Any) -> None:
    # A forked child must not share its parent's sockets: drop them, build anew on first use.
    reset_runtime(close=False)


@signals.worker_ready.connect
def _worker_ready(sender: Any, **_: Any) -> None:
    rt = get_runtime(sender.app.conf.tersify_settings)
    start_chores(rt, sender.app, str(sender.hostname), str(getattr(sender, "pool_cls", "")))


@signals.worker_shutdown.connect
def _worker_shutdown(sender: Any = None, **_: Any) -> None:
    global _sender
    if _sender is not None:
        _sender.stop()
        _sender = None
    rt = current_runtime()
    hostname = getattr(sender, "hostname", None)
    if hostname and rt is not None:
        clear_heartbeat(rt, str(hostname), consumed_queues(sender.app))
    reset_runtime()


@signals.worker_process_shutdown.connect
def _child_shutdown(**_: Any) -> None:
    reset_runtime()
