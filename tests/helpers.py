"""Helpers the tests share: run the CLI as a user would (or one command in this process), wait
for a condition (bounded)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

import pytest

from tersify.settings import Settings
from tersify.worker.processes.redis_server import free_port

__all__ = ["free_port", "json_lines", "run_command", "tersify", "tersify_argv", "wait_for"]

T = TypeVar("T")


def tersify_argv(*args: str) -> list[str]:
    """The command line of ``tersify ARGS…`` in this interpreter."""
    return [sys.executable, "-m", "tersify.worker.cli", *args]


def tersify(
    settings: Settings, *args: str, stdin: str | None = None, timeout: float = 180.0, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run ``tersify ARGS…`` to its end against the test's Redis and session-log directory
    (``env``: setting overrides)."""
    own = {"redis_url": settings.redis_url, "session_log_dir": str(settings.session_log_dir)}
    return subprocess.run(
        tersify_argv(*args),
        env=settings.child_env(**{**own, **env}),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_command(
    command: ModuleType, name: str, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str, str]:
    """Run ``tersify NAME ARGV…`` in this process through its module (``worker.cli.<name>``:
    its ``add_parser``) on default settings: the exit code, stdout and stderr."""
    parser = argparse.ArgumentParser(prog="tersify")
    command.add_parser(parser.add_subparsers(required=True))
    args = parser.parse_args([name, *argv])
    code: int = args.run(args, Settings())
    out, err = capsys.readouterr()
    return code, out, err


def wait_for(check: Callable[[], T], what: str = "condition", timeout: float = 120.0) -> T:
    """Poll ``check`` until it returns something truthy, and return that; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"{what} not met within {timeout:g}s"
        time.sleep(0.02)
    return value


def json_lines(log: str) -> list[dict[str, Any]]:
    """A process's JSON log lines, parsed: whole lines only (the last may still be being
    written), plain-text lines passed over."""
    whole = log.split("\n")[:-1]
    return [json.loads(line) for line in whole if line.startswith("{")]
