"""structlog configured once per process: JSON off a TTY, a console renderer on one.

Records are rendered and written on one background thread (``QueueListener``): a job thread only
queues its record. With a hundred job threads, a shared stream handler's lock and its writes
cost the worker about a tenth of its CPU, and a slow reader of stderr (a full pipe) would have
stalled every job behind that lock. A forked child (the prefork pool) starts its own thread;
the queue is drained at exit.

A traceback is formatted on the thread that logged it (the listener thread has no exception
to look at) and never shows a frame's local variables, in either format: the frames of a
request hold its headers (an API key among them) and its body. The console renderer's default
(rich, or better-exceptions when installed) prints them, so it gets the plain formatter.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import sys
from logging.handlers import QueueHandler, QueueListener
from typing import Any

import structlog

from tersify.settings import Settings

_configured = False
_front: QueueHandler | None = None  # the root logger's only handler
_target: logging.Handler | None = None  # what renders and writes, on the listener thread
_listener: QueueListener | None = None


class _RecordQueueHandler(QueueHandler):
    """Queues the record as it is: rendering happens on the listener thread, in-process."""

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        """The record unchanged (the stdlib version renders it here, on the caller's thread)."""
        return record


def configure_logging(settings: Settings, *, force: bool = False) -> None:
    """Route stdlib and structlog logging through one renderer (idempotent)."""
    global _configured
    if _configured and not force:
        return
    _configured = True
    as_json = settings.log_format == "json" or (
        settings.log_format == "auto" and not sys.stderr.isatty()
    )
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(exception_formatter=structlog.dev.plain_traceback)
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,  # plain text: no frame's locals
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [_behind_queue(handler)]
    root.setLevel(settings.log_level.upper())
    # Per-job INFO lines from httpx (each model call) and Celery (each task received, each task
    # succeeded) repeat our own summary_completed event, and cost the worker a tenth of its CPU
    # under load (docs/PERFORMANCE.md); their warnings and errors still show.
    for noisy in ("httpx", "celery.worker.strategy", "celery.app.trace"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))


def _behind_queue(handler: logging.Handler) -> logging.Handler:
    """A handler that queues records for ``handler``, which runs on the listener thread."""
    global _front
    _stop_listener()
    _front = _RecordQueueHandler(queue.SimpleQueue())
    _start_listener(handler)
    return _front


def _start_listener(handler: logging.Handler) -> None:
    global _listener, _target
    assert _front is not None
    _target = handler
    _listener = QueueListener(_front.queue, handler)
    _listener.start()


def _stop_listener() -> None:
    global _listener
    if _listener is not None:
        _listener.stop()  # writes what is queued, then ends the thread
        _listener = None


def _restart_in_child() -> None:
    # The listener thread did not survive the fork: the child gets a fresh queue and thread.
    global _listener
    if _front is not None and _target is not None:
        _front.queue = queue.SimpleQueue()
        _listener = None
        _start_listener(_target)


os.register_at_fork(after_in_child=_restart_in_child)
atexit.register(_stop_listener)
