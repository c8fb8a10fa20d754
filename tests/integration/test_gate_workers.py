"""The session gate with real workers: input held in order, crashes never leave a session shut,
late results are kept but never applied twice, Redis restarts are survived."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable

from tersify.client import Producer
from tersify.contract import FallbackReason, Method
from tersify.settings import Settings
from tersify.worker.processes.redis_server import LocalRedis
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, hang, ok
from tests.helpers import wait_for
from tests.integration.conftest import provider_env

StartWorker = Callable[..., WorkerProcess]
LOG = "\n".join(f"line {i}: compiling module_{i}" for i in range(400)) + "\nerror: linker failed\n"


def short_lease(fake_model: FakeModelServer, lease: float, **env: str) -> dict[str, str]:
    """A worker's settings on the fake model with a short gate lease, swept five times a
    second (``env``: more settings)."""
    return {
        **provider_env(fake_model, "anthropic"),
        "model_timeout_seconds": "30",
        "gate_lease_seconds": str(lease),
        "gate_sweep_interval_seconds": "0.2",
        **env,
    }


def test_input_is_held_while_the_job_runs_and_handed_back_in_order(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    fake_model.set_default(ok(latency=1.0))
    start_worker(**provider_env(fake_model, "anthropic"))
    handle = producer.submit(session_id="held", tool_name="bash", output=LOG)
    gate = producer.gate
    assert not gate.is_open("held")
    for text in ("first", "second", "third"):
        gate.hold_input("held", text)
    assert gate.take_held("held") == []  # still closed: nothing handed out
    assert gate.wait_open("held", timeout=20)
    assert handle.result() is not None  # the result is stored before the gate opens
    assert gate.take_held("held") == ["first", "second", "third"]
    assert gate.take_held("held") == []


def test_two_jobs_of_one_session_keep_the_gate_closed_until_both_end(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    fake_model.add_rule("QUICK-JOB", ok(latency=0.2))
    fake_model.add_rule("SLOW-JOB", ok(latency=2.5))
    start_worker(**provider_env(fake_model, "anthropic"))
    quick = producer.submit(session_id="pair", tool_name="bash", output="QUICK-JOB\n" + LOG)
    slow = producer.submit(session_id="pair", tool_name="bash", output="SLOW-JOB\n" + LOG)
    quick.wait(20)
    assert slow.result() is None
    assert not producer.gate.is_open("pair")
    slow.wait(20)
    assert producer.gate.wait_open("pair", timeout=30)


def test_a_killed_worker_leaves_the_gate_open_after_its_lease_and_the_job_finished_by_fallback(
    fake_model: FakeModelServer, start_worker: StartWorker, settings: Settings
) -> None:
    fake_model.set_default(hang(60))
    lease, sweep = 1.0, 0.2
    env = short_lease(fake_model, lease, model_timeout_seconds="60")
    first = start_worker(**env)
    quick_lease = settings.model_copy(update={"gate_lease_seconds": lease})
    with Producer(quick_lease) as producer:
        handle = producer.submit(session_id="crash", tool_name="bash", output=LOG)
        wait_for(lambda: fake_model.request_count >= 1, timeout=60)
        first.kill()
        start_worker(**env)
        assert producer.gate.wait_open("crash", timeout=lease + sweep + 30)
        result = handle.wait(60)
    assert (result.method, result.fallback_reason) == (
        Method.FALLBACK,
        FallbackReason.LEASE_EXPIRED,
    )
    assert "error: linker failed" in result.text


def test_jobs_that_waited_out_their_hold_in_the_queue_say_so_not_that_a_worker_died(
    fake_model: FakeModelServer, start_worker: StartWorker, settings: Settings
) -> None:
    lease = 3.0  # renewed every second: a loaded machine does not stall the running job that long
    fake_model.set_default(ok(latency=3 * lease))
    env = short_lease(fake_model, lease)
    start_worker(args=("--concurrency", "1", "--pool", "threads"), **env)  # one busy slot
    with Producer(settings.model_copy(update={"gate_lease_seconds": lease})) as producer:
        running = producer.submit(session_id="busy", tool_name="bash", output=LOG)
        wait_for(lambda: fake_model.request_count >= 1, timeout=60)
        queued = [
            producer.submit(session_id=f"queued-{i}", tool_name="bash", output=LOG)
            for i in range(4)
        ]
        results = [handle.wait(60) for handle in queued]
        done = running.wait(60)
        assert done.method is Method.LLM, (done.fallback_reason, done.fallback_detail)
    assert {(r.method, r.fallback_reason) for r in results} == {
        (Method.FALLBACK, FallbackReason.QUEUED_TOO_LONG)
    }
    assert all("TERSIFY_GATE_LEASE_SECONDS" in (r.fallback_detail or "") for r in results)
    assert all("error: linker failed" in r.text for r in results)


def test_a_frozen_workers_result_arrives_late_and_is_not_applied(
    fake_model: FakeModelServer, start_worker: StartWorker, settings: Settings
) -> None:
    fake_model.set_default(ok(latency=2.0))
    lease = 1.0
    env = short_lease(fake_model, lease)
    frozen = start_worker(**env)
    with Producer(settings.model_copy(update={"gate_lease_seconds": lease})) as producer:
        handle = producer.submit(session_id="frozen", tool_name="bash", output=LOG)
        wait_for(lambda: fake_model.request_count >= 1, timeout=60)
        assert frozen.proc is not None
        os.killpg(frozen.pid, signal.SIGSTOP)  # a debugger's breakpoint: no renewals
        try:
            start_worker(**env)  # its sweeper finishes the expired hold
            applied = handle.wait(60)
        finally:
            os.killpg(frozen.pid, signal.SIGCONT)
        wait_for(lambda: producer.get_late(handle.job_id) is not None, timeout=20)
        late = producer.get_late(handle.job_id)
        assert producer.get(handle.job_id) == applied  # the applied result did not change
    assert applied.fallback_reason is FallbackReason.LEASE_EXPIRED
    assert late is not None and late.late and late.method is Method.LLM


def test_a_redis_restart_mid_job_loses_no_result_and_leaves_no_gate_closed(
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
    redis_server: LocalRedis,
) -> None:
    fake_model.set_default(ok(latency=1.5))
    start_worker(**provider_env(fake_model, "anthropic"))
    handle = producer.submit(session_id="restart", tool_name="bash", output=LOG)
    wait_for(lambda: fake_model.request_count >= 1, timeout=60)
    redis_server.restart()  # no persistence: the queue, the payload and the gate are gone
    assert producer.gate.is_open("restart")
    result = handle.wait(30)  # the in-flight job still stores its result once Redis is back
    assert result.method is Method.LLM
    after = producer.submit(session_id="restart", tool_name="bash", output=LOG + "again\n")
    assert after.wait(30).method is Method.LLM  # the worker reconnected and takes new jobs
    assert producer.gate.wait_open("restart", timeout=30)
