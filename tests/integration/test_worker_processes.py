"""``tersify worker --processes N``: N real workers under one supervisor, restarted when killed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from producer import keys
from producer.client import Producer
from producer.contract import Method
from producer.settings import Settings
from worker.cli.demo import load_examples

NAMES = ("sup-1@localhost", "sup-2@localhost")
START_SECONDS = 30.0


def tersify(settings: Settings, *argv: str, **popen: Any) -> subprocess.Popen[bytes]:
    """``tersify ARGV…`` against the test Redis (extractive provider: no model needed)."""
    env = settings.child_env(
        redis_url=settings.redis_url,
        session_log_dir=str(settings.session_log_dir),
        log_format="json",
        metrics_port="0",  # two processes on one host: no port to share
    )
    return subprocess.Popen([sys.executable, "-m", "worker.cli", *argv], env=env, **popen)


def heartbeat(redis_client: Any, name: str) -> dict[str, Any] | None:
    """A worker's liveness record, or None."""
    raw = redis_client.get(keys.worker_alive(name))
    return json.loads(raw) if raw else None


def wait_for(check: Any, what: str, timeout: float = START_SECONDS) -> Any:
    """Poll ``check()`` until it returns something truthy; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"{what} within {timeout}s"
        time.sleep(0.05)
    return value


@pytest.fixture
def supervisor(
    settings: Settings, redis_client: Any, tmp_path: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """``tersify worker --processes 2`` running, both children beating; stopped afterwards."""
    with (tmp_path / "supervisor.log").open("ab") as log:
        proc = tersify(
            settings,
            *("worker", "--processes", "2", "--concurrency", "4", "--hostname", "sup@localhost"),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    pids: set[int] = set()
    try:
        for name in NAMES:
            pids.add(wait_for(lambda n=name: heartbeat(redis_client, n), f"{name} beat")["pid"])
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        for name in NAMES:  # the children have sessions of their own: never leave one behind
            record = heartbeat(redis_client, name)
            pids |= {record["pid"]} if record else set()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_every_process_takes_jobs_and_the_check_sees_them_all(
    supervisor: subprocess.Popen[bytes], settings: Settings
) -> None:
    examples = load_examples()
    with Producer(settings) as producer:
        handles = [
            producer.submit(session_id=f"p-{i}", tool_name=ex.tool_name, output=ex.output)
            for i, ex in enumerate(examples * 2)
        ]
        results = [handle.wait(30) for handle in handles]
    assert {result.method for result in results} == {Method.EXTRACTIVE}

    check = tersify(
        settings,
        *("worker", "--processes", "2", "--hostname", "sup@localhost", "--check"),
        stdout=subprocess.PIPE,
    )
    out, _ = check.communicate(timeout=30)
    assert check.returncode == 0, out
    assert [line.split(":")[0] for line in out.decode().splitlines()] == list(NAMES)


def test_a_killed_process_is_restarted_and_sigterm_stops_them_all(
    supervisor: subprocess.Popen[bytes], redis_client: Any
) -> None:
    first = heartbeat(redis_client, NAMES[0])
    assert first is not None
    os.kill(first["pid"], signal.SIGKILL)

    restarted = wait_for(
        lambda: (hb := heartbeat(redis_client, NAMES[0])) and hb["pid"] != first["pid"] and hb,
        "the killed process restarted",
    )
    os.kill(restarted["pid"], 0)  # alive

    supervisor.send_signal(signal.SIGTERM)
    assert supervisor.wait(timeout=30) == 0
    for name in NAMES:  # a clean shutdown removes each heartbeat
        assert heartbeat(redis_client, name) is None
