"""``tersify worker --processes N``: N real workers under one supervisor, restarted when killed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tersify.client import Producer
from tersify.contract import Method
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.cli.demo import load_examples
from tersify.worker.processes.group import GroupProcess
from tests.helpers import tersify, tersify_argv, wait_for

NAMES = ("sup-1@localhost", "sup-2@localhost")
START = 30.0


def env(settings: Settings) -> dict[str, str]:
    """The extractive provider, no metrics port: two processes on one host share none."""
    return {
        "session_log_dir": str(settings.session_log_dir),
        "log_format": "json",
        "metrics_port": "0",
    }


def heartbeat(redis_client: Any, name: str) -> dict[str, Any] | None:
    """A worker's liveness record, or None."""
    raw = redis_client.get(keys.worker_alive(name))
    return json.loads(raw) if raw else None


@pytest.fixture
def supervisor(settings: Settings, redis_client: Any, tmp_path: Path) -> Iterator[GroupProcess]:
    """``tersify worker --processes 2`` running, both children beating; stopped afterwards."""
    argv = tersify_argv("worker", "--processes", "2", "--concurrency", "4")
    proc = GroupProcess(
        [*argv, "--hostname", "sup@localhost"],
        env=settings.child_env(redis_url=settings.redis_url, **env(settings)),
        log_path=tmp_path / "supervisor.log",
    ).start()
    pids: set[int] = set()
    try:
        for name in NAMES:
            record = wait_for(lambda n=name: heartbeat(redis_client, n), f"{name} beat", START)
            pids.add(record["pid"])
        yield proc
    finally:
        proc.stop(timeout=30)
        for name in NAMES:  # the children have sessions of their own: never leave one behind
            record = heartbeat(redis_client, name)
            pids |= {record["pid"]} if record else set()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_every_process_takes_jobs_and_the_check_sees_them_all(
    supervisor: GroupProcess, settings: Settings
) -> None:
    examples = load_examples()
    with Producer(settings) as producer:
        handles = [
            producer.submit(session_id=f"p-{i}", tool_name=ex.tool_name, output=ex.output)
            for i, ex in enumerate(examples * 2)
        ]
        results = [handle.wait(30) for handle in handles]
    assert {result.method for result in results} == {Method.EXTRACTIVE}

    argv = ("worker", "--processes", "2", "--hostname", "sup@localhost", "--check")
    check = tersify(settings, *argv, **env(settings))
    assert check.returncode == 0, check.stdout + check.stderr
    assert [line.split(":")[0] for line in check.stdout.splitlines()] == list(NAMES)


def test_a_killed_process_is_restarted_and_sigterm_stops_them_all(
    supervisor: GroupProcess, redis_client: Any
) -> None:
    first = heartbeat(redis_client, NAMES[0])
    assert first is not None
    os.kill(first["pid"], signal.SIGKILL)

    restarted = wait_for(
        lambda: (hb := heartbeat(redis_client, NAMES[0])) and hb["pid"] != first["pid"] and hb,
        "the killed process restarted",
    )
    os.kill(restarted["pid"], 0)  # alive

    assert supervisor.proc is not None
    supervisor.proc.send_signal(signal.SIGTERM)
    assert supervisor.proc.wait(timeout=30) == 0
    for name in NAMES:  # a clean shutdown removes each heartbeat
        assert heartbeat(redis_client, name) is None
