"""Worker processes: the Celery pool, concurrency, metrics and logging."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class WorkerSettings(BaseModel):
    """How a `tersify worker` runs, what it exposes and how it logs."""

    worker_pool: Literal["threads", "prefork", "solo", "gevent"] = Field(
        "threads", description="Celery pool."
    )
    worker_concurrency: int = Field(128, ge=1, description="In-flight jobs per worker process.")
    worker_processes: int = Field(
        1, ge=1, description="Processes per `tersify worker`; one per core on a dedicated host."
    )
    worker_prefetch_multiplier: int = Field(
        1, ge=1, description="Messages reserved per slot, the running one included."
    )
    worker_send_events: bool = Field(
        False, description="Celery task events, for Flower: three broker messages per job."
    )
    metrics_port: int = Field(
        9808, ge=0, le=65535, description="Worker Prometheus endpoint port; 0: off."
    )
    metrics_host: str = Field(
        "127.0.0.1", description="Address the worker's metrics bind; 0.0.0.0 in containers."
    )
    metrics_recent_fallbacks: int = Field(
        500, ge=10, description="Fallbacks kept in Redis for `tersify status`."
    )
    log_format: Literal["auto", "json", "console"] = Field("auto", description="auto: TTY→console.")
    log_level: str = Field("INFO", description="Root log level.")
