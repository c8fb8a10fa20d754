"""Celery tasks: thin adapters from a broker message to the plain pipeline.

The task boundary is the last place a bad message can be caught: arguments of the wrong shape
and anything a handler raises past its own handling end in the dead-letter list. A task never
raises, so Celery neither retries a poison message nor logs it as a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import structlog
from celery import current_app, current_task, shared_task
from opentelemetry.trace import SpanKind

from tersify.client.tracing import extract, recording, tracer
from tersify.contract import DeadLetterReason
from tersify.store.wire import COMPACT_TASK, SUMMARIZE_TASK
from tersify.worker.jobs.compaction import process_compaction
from tersify.worker.jobs.deadletter import dead_letter
from tersify.worker.jobs.summary import process
from tersify.worker.runtime.runtime import Runtime, get_runtime

log = structlog.get_logger("tersify.tasks")


@shared_task(name=SUMMARIZE_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def summarize(*args: Any, **kwargs: Any) -> None:
    """Summarize one job; a message of the wrong shape is dead-lettered, never retried."""
    _run(SUMMARIZE_TASK, process, args, kwargs)


@shared_task(name=COMPACT_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def compact(*args: Any, **kwargs: Any) -> None:
    """Compact one conversation; a message of the wrong shape is dead-lettered."""
    _run(COMPACT_TASK, process_compaction, args, kwargs)


def _run(
    task: str,
    handler: Callable[[object, Runtime], object],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    rt = get_runtime(current_app.conf.tersify_settings)
    if len(args) != 1 or kwargs:
        detail = f"{task} takes exactly one message argument"
        dead_letter(rt.redis, DeadLetterReason.BAD_ARGUMENTS, detail, [list(args), kwargs])
        return
    try:
        with _job_span(task):
            handler(args[0], rt)
    except Exception as exc:  # a bug or a lost Redis: recorded, never retried, never fatal
        log.exception("task_failed", task=task)
        detail = f"{type(exc).__name__}: {str(exc)[:200]}"
        dead_letter(rt.redis, DeadLetterReason.TASK_FAILED, detail, args[0])


def _job_span(task: str) -> AbstractContextManager[object]:
    """The job's span, continuing the producer's trace; nothing when no spans are recorded."""
    if not recording():
        return nullcontext()
    return tracer.start_as_current_span(
        "tersify.job",
        context=extract(_message_headers()),
        kind=SpanKind.CONSUMER,
        attributes={"tersify.task": task},
    )


def _message_headers() -> dict[str, Any]:
    """The running task's message headers (Celery exposes them on ``request``)."""
    request = getattr(current_task, "request", None)
    return dict(vars(request)) if request is not None else {}
