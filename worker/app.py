"""The Celery app: JSON only, late acks, no result backend (tersify stores its own results)."""

from __future__ import annotations

from typing import Any

from celery import Celery, signals
from kombu import Queue as KombuQueue

from producer.contract import Queue
from producer.publisher import broker_options
from producer.settings import Settings
from worker.heartbeat import clear as clear_heartbeat
from worker.heartbeat import start_heartbeat
from worker.logconfig import configure_logging
from worker.metrics import start_server as start_metrics
from worker.redelivery import start_redelivery
from worker.runtime import current_runtime, get_runtime, reset_runtime


def create_app(settings: Settings) -> Celery:
    """Build the worker app for ``settings``."""
    app = Celery("tersify", broker=settings.redis_url)
    app.conf.update(
        # kombu's Redis transport, but an incomplete queue entry is dead-lettered, not fatal.
        broker_transport="worker.transport:Transport",
        # Celery's consumer, but what it refuses undecoded lands in the dead-letter list, and
        # its event loop wakes for acks queued by pool threads (worker/consumer.py).
        worker_consumer="worker.consumer:Consumer",
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        # No result backend runs, but Celery still builds its disabled one per pool thread,
        # reading every installed package's entry points each time (~2 ms): build it once.
        result_backend_thread_safe=True,
        # A killed worker's job goes back to the queue: acked only after it ran, redelivered
        # after the visibility timeout when the whole worker died, at once when a child died.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        # One message per slot by default: the consumer's loop is woken by every ack
        # (worker/consumer.py), so a slot that finishes gets its next job at once, and a
        # dead worker holds back no more jobs than it was running (docs/PERFORMANCE.md).
        worker_prefetch_multiplier=settings.worker_prefetch_multiplier,
        task_queues=[KombuQueue(q.value, routing_key=q.value) for q in Queue],
        task_default_queue=Queue.INTERACTIVE.value,
        broker_transport_options={
            **broker_options(settings),
            "max_entry_bytes": settings.max_queue_entry_bytes,
        },
        broker_connection_retry_on_startup=True,
        worker_pool=settings.worker_pool,
        worker_concurrency=settings.worker_concurrency,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
        # Task events let Flower show every job; off saves ~3 small broker messages per job.
        worker_send_task_events=settings.worker_send_events,
        task_send_sent_event=settings.worker_send_events,
    )
    app.conf.tersify_settings = settings
    app.autodiscover_tasks(["worker"], related_name="tasks", force=True)

    return app


@signals.setup_logging.connect
def _setup_logging(**_: Any) -> None:
    # Connecting this signal stops Celery from configuring logging behind structlog's back.
    configure_logging(Settings())


@signals.worker_process_init.connect
def _child_started(**_: Any) -> None:
    # A forked child must not share its parent's sockets: drop them, build anew on first use.
    reset_runtime(close=False)


@signals.worker_ready.connect
def _worker_ready(sender: Any = None, **_: Any) -> None:
    rt = get_runtime(sender.app.conf.tersify_settings if sender is not None else None)
    hostname = str(getattr(sender, "hostname", "worker"))
    start_heartbeat(rt, hostname)
    if sender is not None:
        start_redelivery(rt, sender.app)
        start_metrics(rt.settings, rt.redis, str(getattr(sender, "pool_cls", "")))


@signals.worker_shutdown.connect
def _worker_shutdown(sender: Any = None, **_: Any) -> None:
    hostname = getattr(sender, "hostname", None)
    if hostname and current_runtime() is not None:
        clear_heartbeat(get_runtime(), str(hostname))
    reset_runtime()


@signals.worker_process_shutdown.connect
def _child_shutdown(**_: Any) -> None:
    reset_runtime()


app = create_app(Settings())
