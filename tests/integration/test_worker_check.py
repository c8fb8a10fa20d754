"""``tersify worker --check``: a supervisor's cheap liveness probe."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess


def check(settings: Settings, hostname: str) -> subprocess.CompletedProcess[str]:
    """Run the check as a supervisor would."""
    return subprocess.run(
        [sys.executable, "-m", "tersify.worker.cli", "worker", "--check", "--hostname", hostname],
        env=settings.child_env(redis_url=settings.redis_url),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_the_check_passes_for_a_running_worker_and_fails_once_it_is_gone(
    start_worker: Callable[..., WorkerProcess], settings: Settings
) -> None:
    worker = start_worker()
    alive = check(settings, worker.hostname)
    assert alive.returncode == 0, alive.stdout + alive.stderr
    assert "alive" in alive.stdout
    worker.stop()
    assert check(settings, worker.hostname).returncode == 1  # a clean stop clears the record
    assert check(settings, "nobody@nowhere").returncode == 1


def test_the_check_fails_when_redis_is_unreachable() -> None:
    unreachable = Settings(redis_url="redis://127.0.0.1:1/0")
    result = check(unreachable, "celery@host")
    assert result.returncode == 1
    assert "unreachable" in result.stdout
