"""Real ``tersify worker`` processes for integration tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import redis

from producer import keys
from producer.settings import Settings


class WorkerProcess:
    """One worker process in its own process group, with its log in a file."""

    def __init__(self, settings: Settings, log_dir: Path, *, concurrency: int = 8, **env: str):
        self.hostname = f"test-{uuid.uuid4().hex[:8]}@localhost"
        self.settings = settings
        self.log_path = log_dir / f"{self.hostname.split('@')[0]}.log"
        overrides = {"redis_url": settings.redis_url, "log_format": "json", **env}
        self._env = settings.child_env(**overrides)
        self._concurrency = concurrency
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> WorkerProcess:
        """Start the worker and wait for its first heartbeat."""
        args = [
            sys.executable,
            "-m",
            "worker.cli",
            "worker",
            "--hostname",
            self.hostname,
            "--concurrency",
            str(self._concurrency),
            "--pool",
            "threads",
        ]
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                args,
                env=self._env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        client = redis.Redis.from_url(self.settings.redis_url)
        try:
            deadline = time.monotonic() + timeout
            while not client.exists(keys.worker_alive(self.hostname)):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"worker did not start:\n{self.log()[-3000:]}")
                time.sleep(0.05)
        finally:
            client.close()
        return self

    def log(self) -> str:
        """Everything the worker printed so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL the whole process group: no cleanup, no ack."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM (Celery's warm shutdown), then SIGKILL if it lingers."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
