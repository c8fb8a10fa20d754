"""structlog configured once per process: JSON off a TTY, a console renderer on one."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from producer.settings import Settings

_configured = False


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
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer()
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if as_json:
        shared.append(structlog.processors.format_exc_info)
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
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level.upper())
    # One INFO line per model call from httpx is noise beside our own summary_completed event.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, root.level))
