"""Celery's consumer, with two changes: refused messages are dead-lettered, and the event loop
is woken when a pool thread hands it work.

Celery runs every late ack on the consumer's event loop: a pool thread that finishes a task
queues the ack with ``call_soon`` and returns. Nothing wakes the loop, which sleeps in ``epoll``
until a socket or a timer fires. With the prefetch full, no socket fires, so the acks, and the
room they make for the next messages, waited about two seconds while the pool threads sat
idle: 256 jobs, then a pause, over and over (docs/PERFORMANCE.md). Here each ``call_soon``
from a pool thread also wakes the loop through the transport's pipe (``worker.transport``).
"""

from __future__ import annotations

from typing import Any

from celery.worker.consumer import Consumer as CeleryConsumer

from worker.deadletters import dead_letter_refused

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
        dead_letter_refused(message, f"undecodable body: {type(exc).__name__}")
        super().on_decode_error(message, exc)
