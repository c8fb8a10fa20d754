"""A real ``tersify worker`` process, started and stopped as a unit: the demo's, the tests' and
the benchmarks' one way to run a worker."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from tersify.settings import Settings
from tersify.store import keys
from tersify.store.redis_url import sync_client
from tersify.worker.processes.group import GroupProcess

TERSIFY_WORKER = (sys.executable, "-m", "tersify.worker.cli", "worker")
"""``tersify worker``, what ships."""

CELERY_WORKER = (
    *(sys.executable, "-m", "celery", "-A", "tersify.worker.broker.main", "worker"),
    *("--queues", "interactive,batch", "--without-mingle", "--without-gossip"),
)
"""The same app through Celery's own launcher (it patches for ``--pool gevent`` first)."""


class WorkerProcess(GroupProcess):
    """One worker process on ``settings``' Redis; ``start`` returns after its first heartbeat.

    ``env`` overrides settings by field name (``log_format="json"``); ``args`` follow the
    command (``--concurrency 8``). The hostname is unique unless given.
    """

    def __init__(
        self,
        settings: Settings,
        log_dir: Path,
        *,
        hostname: str | None = None,
        args: Sequence[str] = ("--concurrency", "8", "--pool", "threads"),
        command: Sequence[str] = TERSIFY_WORKER,
        cwd: Path | None = None,
        **env: str,
    ) -> None:
        self.hostname = hostname or f"worker-{uuid.uuid4().hex[:8]}@localhost"
        self.settings = settings
        overrides = {"redis_url": settings.redis_url, **env}
        super().__init__(
            [*command, "--hostname", self.hostname, *args],
            env=settings.child_env(**overrides),
            log_path=log_dir / f"{self.hostname.split('@')[0]}.log",
            cwd=cwd,
        )

    def start(self, timeout: float = 120.0) -> Self:
        """Start the worker and wait until it has beaten once (it is then taking jobs)."""
        super().start()
        client = sync_client(self.settings)
        try:
            self.wait_until(
                lambda: client.exists(keys.worker_alive(self.hostname)), "worker start", timeout
            )
        finally:
            client.close()
        return self
