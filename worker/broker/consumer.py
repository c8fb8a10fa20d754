"""Celery's consumer, with two changes: what it refuses is dead-lettered, and the event loop is
woken when a pool thread hands it work.

Celery refuses some messages before any task runs: a body it cannot decode (it acks and logs
it), a task name no worker knows, a message it rejects as invalid. Each ends in the dead-letter
list with its reason (``on_decode_error`` and the two signal handlers below).

Celery runs every late ack on the consumer's event loop: a pool thread that finishes a task
queues the ack with ``call_soon`` and returns. Nothing wakes the loop, which sleeps in ``epoll``
until a socket or a timer fires. With the prefetch full, no socket fires, so the acks, and the
room they make for the next messages, waited about two seconds while the pool threads sat
idle: 256 jobs, then a pause, over and over (docs/PERFORMANCE.md). Here each ``call_soon``
from a pool thread also wakes the loop through the transport's pipe (``worker.broker.transport``).
"""

from __future__ import annotations

from typing import Any

from celery import current_app, signals
from celery.worker.consumer import Consumer as CeleryConsumer

from tersify.contract import DeadLetterReason
from tersify.worker.jobs.deadletter import dead_letter
from tersify.worker.runtime.runtime import get_runtime

_BaseConsumer: Any = CeleryConsumer


class Consumer(_BaseConsumer):  # type: ignore[misc]  # celery-types leaves it untyped
    """Celery's consumer, dead-lettering undecodable messages and waking its loop for acks."""

    def call_soon(self, p: Any, *args: Any, **kwargs: Any) -> Any:
        """Queue ``p`` for the event loop and wake the loop so that it runs it now."""
        queued = super().call_soon(p, *args, **kwargs)
        connection = self.connection
        wake = getattr(getattr(connection, "transport", None), "wake_consumer", None)
        if wake is not None:
            wake()
        return queued

    def on_decode_error(self, message: Any, exc: Exception) -> None:
        """Dead-letter, then let Celery log and acknowledge the message as it always does."""
        detail = f"{type(exc).__name__}: {str(exc)[:200]}"
        _refused(message, DeadLetterReason.UNDECODABLE_BODY, detail)
        super().on_decode_error(message, exc)


def _refused(message: Any, reason: DeadLetterReason, detail: str) -> None:
    body = getattr(message, "body", None)
    dead_letter(get_runtime(current_app.conf.tersify_settings).redis, reason, detail, body)


@signals.task_unknown.connect
def _unknown_task(message: Any = None, name: str = "?", **_: Any) -> None:
    _refused(message, DeadLetterReason.UNKNOWN_TASK, f"no task named {str(name)[:200]!r}")


@signals.task_rejected.connect
def _rejected(message: Any = None, exc: BaseException | None = None, **_: Any) -> None:
    detail = f"{type(exc).__name__}: {str(exc)[:200]}" if exc else "unknown format"
    _refused(message, DeadLetterReason.REJECTED, detail)
