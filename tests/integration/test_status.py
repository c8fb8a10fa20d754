"""``tersify status`` against real Redis and a real worker: JSON for scripts, tables for people."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from tersify.client import Producer
from tersify.contract import Method
from tersify.settings import Settings
from tersify.worker.cli.demo import load_examples
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, status
from tests.helpers import tersify, wait_for
from tests.integration.conftest import provider_env

StartWorker = Callable[..., WorkerProcess]
EXAMPLE = next(ex for ex in load_examples() if len(ex.output) > 2000)


def status_json(settings: Settings) -> dict[str, Any]:
    """``tersify status --json``, parsed."""
    done = tersify(settings, "status", "--json")
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_status_json_shows_workers_recent_failures_and_the_fallback_rate(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer, settings: Settings
) -> None:
    worker = start_worker(
        **provider_env(fake_model, "anthropic"), metrics_port="0", model_max_attempts="1"
    )
    fake_model.add_rule("FAIL-THIS-ONE", status(500))
    results = [
        producer.submit(
            session_id="st", tool_name=EXAMPLE.tool_name, output=EXAMPLE.output + tail
        ).wait(30)
        for tail in ("", "\none", "\ntwo", "\nFAIL-THIS-ONE")
    ]
    assert [r.method for r in results] == [Method.LLM] * 3 + [Method.FALLBACK]

    # A worker writes its count of finished jobs about once a second: status may lag by that.
    s = wait_for(
        lambda: (s := status_json(settings))["fallback_rate"]["completed"] == 4 and s,
        "the four finished jobs counted",
        timeout=30,
    )
    assert s["queues"] == {"interactive": 0, "batch": 0}
    assert [w["hostname"] for w in s["workers"]] == [worker.hostname]
    assert s["workers"][0]["pool"] == "threads"
    assert s["gated_sessions"] == []
    assert s["fallback_rate"]["completed"] == 4
    assert s["fallback_rate"]["fallbacks"] == 1
    assert s["fallback_rate"]["rate"] == 0.25
    [failure] = s["recent_failures"]
    assert failure["job_id"] == results[-1].job_id
    assert failure["reason"] == results[-1].fallback_reason
    assert failure["session_id"] == "st"


def test_status_json_shows_gated_sessions_queued_jobs_and_held_inputs(
    producer: Producer, settings: Settings
) -> None:
    # No worker runs: the jobs wait in their queue and keep their sessions gated.
    producer.submit(session_id="waiting", tool_name=EXAMPLE.tool_name, output=EXAMPLE.output)
    producer.submit(session_id="waiting", tool_name="bash", output=EXAMPLE.output + "\nagain")
    producer.gate.hold_input("waiting", "typed while the gate was closed")

    s = status_json(settings)
    assert s["queues"]["interactive"] == 2
    assert s["workers"] == []
    [gated] = s["gated_sessions"]
    assert (gated["session_id"], gated["jobs"], gated["held_inputs"]) == ("waiting", 2, 1)
    assert 0 <= gated["closed_seconds"] < 60
    assert s["circuits"] == {"anthropic": "closed", "openai": "closed"}


def test_status_prints_tables_for_people(producer: Producer, settings: Settings) -> None:
    producer.submit(session_id="table-view", tool_name=EXAMPLE.tool_name, output=EXAMPLE.output)
    done = tersify(settings, "status")
    assert done.returncode == 0, done.stderr
    assert "sessions gated now: 1" in done.stdout
    assert "table-view" in done.stdout
    assert "interactive" in done.stdout


def test_status_fails_cleanly_when_redis_is_unreachable(settings: Settings) -> None:
    env = settings.child_env(redis_url="redis://127.0.0.1:1/0")
    done = subprocess.run(
        [sys.executable, "-m", "tersify.worker.cli", "status", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 4
    assert done.stderr == (
        "tersify status: cannot reach Redis at redis://127.0.0.1:1/0 (connection refused): start "
        "redis-server there, or point TERSIFY_REDIS_URL at a running one\n"
    )


def test_status_watch_piped_prints_a_snapshot_per_refresh_until_interrupted(
    producer: Producer, settings: Settings
) -> None:
    producer.submit(session_id="watched", tool_name=EXAMPLE.tool_name, output=EXAMPLE.output)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tersify.worker.cli", "status", "--watch", "0.2"],
        env=settings.child_env(redis_url=settings.redis_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        # stdout is a pipe: each refresh prints a whole snapshot; wait for the second one
        while sum("sessions gated now: 1" in line for line in seen) < 2:
            assert time.monotonic() < deadline, "".join(seen)
            seen.append(proc.stdout.readline())
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 130, err
    assert any("watched" in line for line in seen)
