"""Faults survived with real processes: warm shutdown, Redis unreachable at submit, a session-log
directory that cannot be written, a model that cuts or drips its answers."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tersify.client import Producer
from tersify.contract import FallbackReason, Method, Queue
from tersify.errors import RedisUnavailableError
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.redis_server import LocalRedis
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, close_mid_body, ok, slow_drip
from tests.helpers import json_lines, wait_for
from tests.integration.conftest import provider_env

StartWorker = Callable[..., WorkerProcess]
LOG = "\n".join(f"[{i:04d}] building target {i}" for i in range(300)) + "\nerror: link failed\n"


def test_sigterm_lets_the_job_in_flight_finish(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    fake_model.set_default(ok(latency=1.5))
    worker = start_worker(**provider_env(fake_model, "anthropic"))
    handle = producer.submit(session_id="term", tool_name="bash", output=LOG)
    deadline = time.monotonic() + 15
    while fake_model.request_count < 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    worker.stop()  # SIGTERM: Celery's warm shutdown
    assert worker.returncode == 0
    assert handle.wait(30).method is Method.LLM
    assert producer.gate.is_open("term")


def test_redis_unreachable_at_submit_is_a_typed_error(tmp_path: Path) -> None:
    dead = Settings(redis_url="redis://127.0.0.1:1/0", session_log_dir=tmp_path)
    with Producer(dead) as producer, pytest.raises(RedisUnavailableError):
        producer.submit(session_id="down", tool_name="bash", output=LOG)


def test_a_failed_publish_reopens_the_gate_and_leaves_no_job_behind(
    producer: Producer, redis_client
) -> None:
    # The queue alone refuses the entry (it is not a list): the payload and the gate are
    # written, then undone.
    redis_client.set(Queue.INTERACTIVE.value, "not a list")
    try:
        with pytest.raises(RedisUnavailableError, match="could not publish"):
            producer.submit(session_id="half", tool_name="bash", output=LOG, job_id="j" * 32)
    finally:
        redis_client.delete(Queue.INTERACTIVE.value)
    assert producer.gate.is_open("half")
    assert not redis_client.exists(keys.job_meta("j" * 32))


def test_an_unwritable_session_log_degrades_but_the_job_still_answers(
    start_worker: StartWorker, producer: Producer, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the log directory should be")
    worker = start_worker(session_log_dir=str(blocker / "sessions"))
    result = producer.submit(session_id="disk", tool_name="bash", output=LOG).wait(30)
    assert result.method is Method.EXTRACTIVE
    assert "error: link failed" in result.text
    worker.stop()
    assert "session_log_write_failed" in worker.log()


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [(close_mid_body(), FallbackReason.CONNECTION_ERROR), (slow_drip(10), FallbackReason.TIMEOUT)],
)
def test_a_model_that_cuts_or_drips_its_answer_ends_in_the_fallback(
    behaviour,
    reason: FallbackReason,
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
) -> None:
    fake_model.set_default(behaviour)
    start_worker(**{**provider_env(fake_model, "openai"), "model_timeout_seconds": "1"})
    result = producer.submit(session_id="cut", tool_name="bash", output=LOG).wait(30)
    assert (result.method, result.fallback_reason) == (Method.FALLBACK, reason)
    assert "error: link failed" in result.text


def test_a_worker_logs_a_chore_failing_while_redis_is_down_once_and_again_when_it_recovers(
    start_worker: StartWorker, redis_server: LocalRedis
) -> None:
    worker = start_worker(gate_sweep_interval_seconds="0.2")  # a sweep five times a second
    redis_server.kill()
    try:
        wait_for(lambda: chore_events(worker, "chore_failed", "sweep"), "the sweep's failure", 30)
        time.sleep(3)  # about fifteen more sweeps, all failing (fewer on a loaded machine)
    finally:
        redis_server.start()
    wait_for(lambda: chore_events(worker, "chore_recovered", "sweep"), "the sweep's recovery", 60)
    (failed,) = chore_events(worker, "chore_failed", "sweep")
    assert "ConnectionError" in str(failed["error"])
    assert "exception" not in failed  # Redis out of reach: no traceback, it would say nothing
    (recovered,) = chore_events(worker, "chore_recovered", "sweep")
    assert int(str(recovered["failed_runs"])) >= 5  # many failed runs, one line


def chore_events(worker: WorkerProcess, event: str, chore: str) -> list[dict[str, object]]:
    """The worker's JSON log lines of ``event`` about ``chore``."""
    return [e for e in json_lines(worker.log()) if e.get("event") == event and e["chore"] == chore]
