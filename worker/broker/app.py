"""The Celery app: JSON only, late acks, no result backend (tersify stores its own results).

``create_app`` is called once per process by its entry point (``tersify worker``, or
``tersify.worker.broker.main`` for Celery's own command line) with the one ``Settings`` it built.
"""

from __future__ import annotations

from celery import Celery
from kombu import Queue as KombuQueue

from tersify.contract import Queue
from tersify.settings import Settings
from tersify.store.publisher import broker_options
from tersify.store.redis_url import broker_url, sentinel_target

# Imported for their effect: the shared tasks join every app, the signal handlers connect.
from tersify.worker.broker import signals, tasks  # noqa: F401

_TRANSPORT = "tersify.worker.broker.transport"


def create_app(settings: Settings) -> Celery:
    """Build the worker app for ``settings``."""
    app = Celery("tersify", broker=broker_url(settings))
    sentinel = sentinel_target(settings.redis_url) is not None
    app.conf.update(
        # kombu's Redis transport, but an incomplete queue entry is dead-lettered, not fatal.
        broker_transport=f"{_TRANSPORT}:{'Sentinel' if sentinel else ''}Transport",
        # Celery's consumer, but what it refuses undecoded lands in the dead-letter list, and
        # its event loop wakes for acks queued by pool threads (worker/broker/consumer.py).
        worker_consumer="tersify.worker.broker.consumer:Consumer",
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
        # (worker/broker/consumer.py), so a slot that finishes gets its next job at once, and a
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

    return app
