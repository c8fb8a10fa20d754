"""A child process in a process group of its own, its output in a log file.

Stopping it signals the whole group, so the process's own children (a prefork pool, the
supervisor's workers) stop with it. Workers, the HTTP API, the fake model and the benchmarks'
peers are all started this way, by the demo, the tests and the benchmarks.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Self


class GroupProcess:
    """One child process and its process group; not started until ``start``."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        log_path: Path,
        cwd: Path | None = None,
    ) -> None:
        self.argv = list(argv)
        self.env = env
        self.log_path = log_path
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        """Start the process; its output goes to the log file (appended)."""
        with self.log_path.open("ab") as log:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(
                self.argv,
                env=self.env,
                cwd=self.cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        return self

    @property
    def pid(self) -> int:
        """The process id, which is also its group's id."""
        assert self.proc is not None, "not started"
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit code once it has exited, else None."""
        return None if self.proc is None else self.proc.poll()

    def alive(self) -> bool:
        """Whether the process was started and still runs."""
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        """Everything the process printed so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, chars: int = 3000) -> str:
        """The end of what the process printed."""
        return self.log()[-chars:]

    def wait_until(self, check: Callable[[], object], what: str, timeout: float = 30.0) -> None:
        """Poll ``check`` until it holds; stop the process and raise if it dies or time is up."""
        deadline = time.monotonic() + timeout
        while not check():
            if not self.alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"{what} within {timeout:g}s failed; its log:\n{self.log_tail()}"
                )
            time.sleep(0.05)

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM the group (a graceful shutdown), then SIGKILL it if it lingers."""
        if not self.alive():
            return
        os.killpg(self.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)  # type: ignore[union-attr]  # alive: started
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL the whole group: no cleanup, no acknowledgement."""
        if self.alive():
            os.killpg(self.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)  # type: ignore[union-attr]  # alive: started

    def __enter__(self) -> Self:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
