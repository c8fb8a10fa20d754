"""Every message a worker refuses ends in the dead-letter list with its reason.

Covers what Celery itself refuses before a task runs: a body that cannot be decoded (Celery acks
it and logs; ``worker.consumer`` records it), a task name no worker knows, and a message Celery
rejects as invalid. Malformed job payloads are dead-lettered by the pipeline; non-JSON queue
entries by ``worker.transport``.
"""

from __future__ import annotations

from typing import Any

from celery import signals

from worker.pipeline import dead_letter
from worker.runtime import get_runtime


def _excerpt(message: Any) -> object:
    body = getattr(message, "body", None)
    if isinstance(body, bytes | bytearray):
        return body[:500].decode("utf-8", "replace")
    return body


def dead_letter_refused(message: Any, reason: str) -> None:
    """Record a message Celery refused, with an excerpt of its body."""
    dead_letter(get_runtime(), _excerpt(message), reason)


@signals.task_unknown.connect
def _unknown_task(message: Any = None, name: str = "?", **_: Any) -> None:
    dead_letter_refused(message, f"unknown task {name!r}")


@signals.task_rejected.connect
def _rejected(message: Any = None, exc: BaseException | None = None, **_: Any) -> None:
    dead_letter_refused(message, f"rejected: {type(exc).__name__ if exc else 'unknown format'}")
