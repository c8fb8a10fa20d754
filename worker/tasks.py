"""Celery tasks: thin adapters from a broker message to the plain pipeline."""

from __future__ import annotations

from typing import Any

from celery import current_app, shared_task

from producer.wire import COMPACT_TASK, SUMMARIZE_TASK
from worker.compaction.job import process_compaction
from worker.pipeline import dead_letter, process
from worker.runtime import get_runtime


@shared_task(name=SUMMARIZE_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def summarize(*args: Any, **kwargs: Any) -> None:
    """Summarize one job; a message of the wrong shape is dead-lettered, never retried."""
    rt = get_runtime(current_app.conf.tersify_settings)
    if len(args) != 1 or kwargs:
        dead_letter(rt, {"args": args, "kwargs": kwargs}, "expected exactly one message argument")
        return
    process(args[0], rt)


@shared_task(name=COMPACT_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def compact(*args: Any, **kwargs: Any) -> None:
    """Compact one conversation; a message of the wrong shape is dead-lettered."""
    rt = get_runtime(current_app.conf.tersify_settings)
    if len(args) != 1 or kwargs:
        dead_letter(rt, {"args": args, "kwargs": kwargs}, "expected exactly one message argument")
        return
    process_compaction(args[0], rt)
