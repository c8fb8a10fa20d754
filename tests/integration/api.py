"""Running ``tersify api`` for the tests: the server process and the tokens it takes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Self

import httpx

from tersify.settings import Settings
from tersify.worker.processes.group import GroupProcess
from tests.helpers import free_port, tersify_argv

TOKEN = "tok-full-access-0123456789abcdef"
SCOPED = "tok-team-a-only-0123456789abcdef"
TOKENS = f"{TOKEN},{SCOPED}:team-a/*"


class ApiServer(GroupProcess):
    """One ``tersify api`` process (its own process group) on a free loopback port."""

    def __init__(self, settings: Settings, log_dir: Path, *, workers: int = 2, **env: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        overrides = {"redis_url": settings.redis_url, "log_format": "json", **env}
        super().__init__(
            self.command("--workers", str(workers)),
            env=settings.child_env(**overrides),
            log_path=log_dir / f"api-{self.port}.log",
        )

    def command(self, *extra: str) -> list[str]:
        """The ``tersify api`` command line."""
        return tersify_argv("api", "--port", str(self.port), *extra)

    def start(self, timeout: float = 20.0) -> Self:
        """Start the server and wait until ``/healthz`` answers (with any status)."""
        super().start()
        self.wait_until(self._answers, "api start", timeout)
        return self

    def _answers(self) -> bool:
        try:
            httpx.get(f"{self.url}/healthz", timeout=1.0)
        except httpx.TransportError:
            return False
        return True

    def run_once(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """Run ``tersify api`` expecting it to refuse to start (bounded by a timeout)."""
        return subprocess.run(
            self.command(*extra), env=self.env, capture_output=True, text=True, timeout=30
        )
