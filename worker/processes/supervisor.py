"""``tersify worker --processes N``: N worker processes on one host, one per core.

A worker process runs its jobs on threads that share one GIL: past about 300 jobs/s (with a
200 ms model) it is bound to one core while the others idle (docs/PERFORMANCE.md). This starts
N complete workers (each its own Celery consumer, threads and clients), named ``NODE-1@HOST``,
``NODE-2@HOST``…, forwards SIGTERM and SIGINT to them (Celery's warm shutdown: running jobs
finish), and restarts one that dies on its own, after a pause that doubles with each death in
quick succession. It returns when every child has exited after a signal.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType

import structlog

log = structlog.get_logger("tersify.supervisor")

POLL_SECONDS = 0.2
MAX_RESTART_PAUSE_SECONDS = 30.0
# A child that ran this long before dying is restarted at once: it was not crash-looping.
STABLE_SECONDS = 60.0


def child_names(hostname: str, count: int) -> list[str]:
    """The node names of ``count`` children of the worker named ``hostname`` (NODE@HOST)."""
    node, at, host = hostname.partition("@")
    return [f"{node}-{index}{at}{host}" for index in range(1, count + 1)]


@dataclass
class _Child:
    index: int
    name: str
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    deaths: int = 0
    restart_at: float = 0.0
    exit_code: int | None = field(default=None)


class Supervisor:
    """Keeps one worker process per name running until told to stop."""

    def __init__(
        self, names: list[str], command: Callable[[int, str], tuple[list[str], dict[str, str]]]
    ) -> None:
        """``command(index, name)`` gives child ``index`` (from 1)'s argv and environment."""
        self._children = [_Child(index, name) for index, name in enumerate(names, 1)]
        self._command = command
        self._stopping: int | None = None  # the signal that asked us to stop

    def run(self) -> int:
        """Start every child, supervise them, and return 0 (or the first failure's code)."""
        previous = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)
        }
        try:
            for child in self._children:
                self._start(child)
            while self._stopping is None or any(c.proc is not None for c in self._children):
                time.sleep(POLL_SECONDS)
                for child in self._children:
                    self._tend(child)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for child in self._children:  # only after an error: children never outlive us
                if child.proc is not None and child.proc.poll() is None:
                    child.proc.terminate()
        codes = [child.exit_code or 0 for child in self._children]
        return next((code for code in codes if code != 0), 0)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self._stopping is None:
            log.info("worker_processes_stopping", signal=signal.Signals(signum).name)
        self._stopping = signum
        for child in self._children:
            if child.proc is not None and child.proc.poll() is None:
                child.proc.send_signal(signum)

    def _start(self, child: _Child) -> None:
        # Each child in its own session: a terminal's Ctrl-C reaches it once, through us, as a
        # warm shutdown; a second signal would make Celery abandon its running jobs.
        argv, env = self._command(child.index, child.name)
        child.proc = subprocess.Popen(argv, env=env, start_new_session=True)
        child.started = time.monotonic()
        log.info("worker_process_started", name=child.name, pid=child.proc.pid)

    def _tend(self, child: _Child) -> None:
        now = time.monotonic()
        if child.proc is None:
            if self._stopping is None and child.restart_at and now >= child.restart_at:
                child.restart_at = 0.0
                self._start(child)
            return
        code = child.proc.poll()
        if code is None:
            return
        child.proc = None
        if self._stopping is not None:
            child.exit_code = code if code >= 0 else 0  # killed by the signal we forwarded
            return
        child.deaths = 1 if now - child.started >= STABLE_SECONDS else child.deaths + 1
        pause = min(MAX_RESTART_PAUSE_SECONDS, 2.0 ** (child.deaths - 1) - 1.0)
        child.restart_at = now + pause
        log.error("worker_process_died", name=child.name, code=code, restart_in=round(pause, 1))
