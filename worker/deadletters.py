"""Every message a worker refuses ends in the dead-letter list with its reason.

Covers what Celery itself refuses before a task runs: a body that cannot be decoded (Celery acks
it and logs), a task name no worker knows, and a message Celery rejects as invalid. Malformed
job payloads are dead-lettered by the pipeline; non-JSON queue entries by ``worker.transport``.
"""

from __future__ import annotations

from typing import Any

from celery import signals
from celery.worker.consumer import Consumer as CeleryConsumer

from worker.pipeline import dead_letter
from worker.runtime import get_runtime

_BaseConsumer: Any = CeleryConsumer


def _excerpt(message: Any) -> object:
    body = getattr(message, "body", None)
    if isinstance(body, bytes | bytearray):
        return body[:500].decode("utf-8", "replace")
    return body


class Consumer(_BaseConsumer):  # type: ignore[misc]  # celery-types leaves it untyped
    """Celery's consumer, recording undecodable messages before acknowledging them."""

    def on_decode_error(self, message: Any, exc: Exception) -> None:
        """Dead-letter, then let Celery log and acknowledge the message as it always does."""
        dead_letter(get_runtime(), _excerpt(message), f"undecodable body: {type(exc).__name__}")
        super().on_decode_error(message, exc)


@signals.task_unknown.connect
def _unknown_task(message: Any = None, name: str = "?", **_: Any) -> None:
    dead_letter(get_runtime(), _excerpt(message), f"unknown task {name!r}")


@signals.task_rejected.connect
def _rejected(message: Any = None, exc: BaseException | None = None, **_: Any) -> None:
    dead_letter(
        get_runtime(),
        _excerpt(message),
        f"rejected: {type(exc).__name__ if exc else 'unknown format'}",
    )
