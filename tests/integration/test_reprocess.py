"""``tersify reprocess`` against a real Redis and real workers: runs, resume after a kill, skips."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tersify.client import Producer
from tersify.gate import SessionGate
from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.reprocess.estimate import estimate_all
from tersify.worker.reprocess.reader import read_logs
from tests.fakemodel import FakeModelServer, ok
from tests.integration.conftest import provider_env
from tests.unit.test_reprocess import write_archive

StartWorker = Callable[..., WorkerProcess]


KEYED = {"anthropic_api_key": "sk-test-not-a-real-key"}
"""A summary provider with a price (estimates follow the configured provider)."""


def reprocess_cmd(*args: str) -> list[str]:
    """The command line of ``tersify reprocess`` with ``args``."""
    return [sys.executable, "-m", "tersify.worker.cli", "reprocess", "--no-progress", *args]


def start_reprocess(settings: Settings, *args: str) -> subprocess.Popen[bytes]:
    """Start ``tersify reprocess`` in its own process group (so a test can kill it), output off."""
    return subprocess.Popen(
        reprocess_cmd(*args),
        env=settings.child_env(redis_url=settings.redis_url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def reprocess(settings: Settings, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``tersify reprocess`` as a user would, pointed at the test's Redis (``env``: setting
    overrides)."""
    return subprocess.run(
        reprocess_cmd(*args),
        env=settings.child_env(redis_url=settings.redis_url, **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def output_lines(path: Path) -> list[dict[str, Any]]:
    """The output file's lines."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_run_resummarizes_every_logged_job_and_reports_old_against_new(
    tmp_path: Path, settings: Settings, start_worker: StartWorker, fake_model: FakeModelServer
) -> None:
    ids = write_archive(tmp_path / "archive", {"alpha": 3, "beta": 2})
    start_worker(**provider_env(fake_model, "anthropic"))
    out = tmp_path / "new.jsonl"
    done = reprocess(settings, str(tmp_path / "archive"), "--output", str(out))
    assert done.returncode == 0, done.stderr
    lines = output_lines(out)
    assert sorted(line["old_job_id"] for line in lines) == sorted(ids)
    assert all(line["new"]["method"] == "llm" for line in lines)
    assert all(line["new"]["job_id"] != line["old_job_id"] for line in lines)
    assert all(line["old"]["method"] == "fallback" for line in lines)
    assert "0 corrupt line(s) skipped" in done.stdout
    assert "this run: llm=5" in done.stdout
    methods = next(line for line in done.stdout.splitlines() if line.startswith("methods"))
    assert "fallback=5" in methods and "llm=5" in methods


def test_filters_limit_the_run_to_the_chosen_session(
    tmp_path: Path, settings: Settings, start_worker: StartWorker
) -> None:
    write_archive(tmp_path / "archive", {"alpha": 2, "beta": 3})
    start_worker()
    out = tmp_path / "new.jsonl"
    done = reprocess(settings, str(tmp_path / "archive"), "--output", str(out), "--session", "beta")
    assert done.returncode == 0, done.stderr
    assert {line["new"]["session_id"] for line in output_lines(out)} == {"beta"}
    assert len(output_lines(out)) == 3


def test_a_corrupt_and_a_truncated_line_are_counted_and_reported_not_fatal(
    tmp_path: Path, settings: Settings, start_worker: StartWorker
) -> None:
    ids = write_archive(tmp_path / "archive", {"gamma": 3})
    log = tmp_path / "archive" / "gamma.jsonl"
    lines = log.read_text().splitlines()
    lines.insert(2, '{"kind": "output", "job_id": ')
    log.write_text("\n".join(lines) + "\n" + lines[0][:50])
    start_worker()
    out = tmp_path / "new.jsonl"
    done = reprocess(settings, str(log), "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert sorted(line["old_job_id"] for line in output_lines(out)) == sorted(ids)
    assert "2 corrupt line(s) skipped" in done.stdout
    assert f"skipped {log}:3: not JSON (corrupt or truncated)" in done.stdout
    assert f"skipped {log}:8: not JSON (corrupt or truncated)" in done.stdout


def test_a_run_killed_midway_resumes_and_does_every_job_exactly_once(
    tmp_path: Path, settings: Settings, start_worker: StartWorker, fake_model: FakeModelServer
) -> None:
    ids = write_archive(tmp_path / "archive", {"delta": 12, "epsilon": 12})
    fake_model.set_default(ok(latency=0.2))  # slow enough to kill the run part-way
    start_worker(**provider_env(fake_model, "openai"))
    out = tmp_path / "new.jsonl"
    args = (str(tmp_path / "archive"), "--output", str(out), "--parallel", "2")
    proc = start_reprocess(settings, *args)
    try:
        deadline = time.monotonic() + 30
        while not (out.exists() and len(out.read_text().splitlines()) >= 4):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        assert proc.poll() is None  # killed mid-way, not after finishing
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    first = {json.loads(raw)["old_job_id"] for raw in out.read_text().splitlines()}
    assert 4 <= len(first) < len(ids)

    rerun = reprocess(settings, *args)
    assert rerun.returncode == 0, rerun.stderr
    done = [line["old_job_id"] for line in output_lines(out)]
    assert sorted(done) == sorted(ids)  # every job exactly once
    skipped = int(rerun.stdout.split(" already done")[0].rsplit(", ", 1)[1])
    assert skipped >= len(first)
    this_run = rerun.stdout.split("this run: ")[1].splitlines()[0]
    counts = dict(pair.split("=") for pair in this_run.split())
    # jobs in flight at the kill finished in the worker: their redo may be a cache hit
    assert set(counts) <= {"llm", "cache"}
    assert sum(int(n) for n in counts.values()) == len(ids) - skipped


def test_a_dry_run_estimates_the_cost_and_submits_nothing(
    tmp_path: Path, settings: Settings, redis_client: Any
) -> None:
    write_archive(tmp_path / "archive", {"zeta": 4})
    out = tmp_path / "new.jsonl"
    args = (str(tmp_path / "archive"), "--output", str(out), "--dry-run")
    done = reprocess(settings, *args, **KEYED)
    assert done.returncode == 0, done.stderr
    expected = estimate_all(Settings(**KEYED), read_logs([tmp_path / "archive"]).jobs)
    assert f"estimate: 4 job(s) in {expected.requests} model request(s)" in done.stdout
    assert f"~{expected.input_tokens} input" in done.stdout
    assert f"~${expected.usd:.4f} at most" in done.stdout
    assert expected.usd > 0
    free = reprocess(settings, *args)  # no key: the extractive summarizer, which costs nothing
    assert free.returncode == 0, free.stderr
    assert f"~{expected.input_tokens} input" in free.stdout and "~$0.0000 at most" in free.stdout
    assert redis_client.dbsize() == 0
    assert not out.exists()


def test_max_cost_stops_submitting_once_the_budget_is_committed(
    tmp_path: Path, settings: Settings, start_worker: StartWorker
) -> None:
    write_archive(tmp_path / "archive", {"eta": 6})
    one_job = estimate_all(Settings(**KEYED), read_logs([tmp_path / "archive"]).jobs[:1]).usd
    start_worker()
    out = tmp_path / "new.jsonl"
    budget = f"{one_job * 2.5:.8f}"
    done = reprocess(
        settings, str(tmp_path / "archive"), "--output", str(out), "--max-cost", budget, **KEYED
    )
    assert done.returncode == 0, done.stderr
    assert len(output_lines(out)) == 2
    assert "stopped: --max-cost reached, 4 job(s) not submitted" in done.stdout


def test_batch_jobs_never_close_the_session_gate(
    tmp_path: Path, settings: Settings, redis_client: Any
) -> None:
    write_archive(tmp_path / "archive", {"theta": 3})
    out = tmp_path / "new.jsonl"
    # no worker: the jobs stay queued, so the gate is checked while they are all outstanding
    done = reprocess(settings, str(tmp_path / "archive"), "--output", str(out), "--timeout", "0.5")
    assert done.returncode == 1  # timed-out jobs are not checkpointed; a rerun redoes them
    assert "timeout=3" in done.stdout
    assert redis_client.llen("batch") == 3
    status = SessionGate(redis_client, settings).status("theta")
    assert status.open and not status.jobs
    assert out.read_text() == ""


def test_an_interactive_job_overtakes_a_reprocessing_backlog_on_a_shared_worker(
    tmp_path: Path,
    settings: Settings,
    start_worker: StartWorker,
    fake_model: FakeModelServer,
    redis_client: Any,
) -> None:
    backlog = 30
    write_archive(tmp_path / "archive", {"iota": backlog})
    fake_model.set_default(ok(latency=0.1))
    out = tmp_path / "new.jsonl"
    args = (str(tmp_path / "archive"), "--output", str(out), "--parallel", str(backlog))
    proc = start_reprocess(settings, *args)
    try:
        deadline = time.monotonic() + 30
        while redis_client.llen("batch") < backlog:  # the whole backlog queued before a worker
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        start_worker(
            args=("--concurrency", "2", "--pool", "threads"),
            **provider_env(fake_model, "anthropic"),
        )
        with Producer(settings) as producer:
            marker = "INTERACTIVE-OVERTAKES-MARK"
            text = "\n".join(f"{marker} row {i}: value {i * 7}" for i in range(200))
            result = producer.submit(session_id="live", tool_name="bash", output=text).wait(30)
        assert result.method.value == "llm"
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    bodies = [json.dumps(r.body) for r in fake_model.requests]
    position = next(i for i, body in enumerate(bodies) if marker in body)
    assert len(bodies) == backlog + 1
    # the interactive job reached the model while most of the older backlog was still waiting
    assert len(bodies) - 1 - position >= backlog // 2


def test_ctrl_c_stops_a_run_with_a_report_and_a_synced_checkpoint(
    tmp_path: Path, settings: Settings, start_worker: StartWorker, fake_model: FakeModelServer
) -> None:
    ids = write_archive(tmp_path / "archive", {"kappa": 10})
    fake_model.set_default(ok(latency=0.2))
    start_worker(**provider_env(fake_model, "anthropic"))
    out = tmp_path / "new.jsonl"
    proc = subprocess.Popen(
        reprocess_cmd(str(tmp_path / "archive"), "--output", str(out), "--parallel", "1"),
        env=settings.child_env(redis_url=settings.redis_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (out.exists() and len(out.read_text().splitlines()) >= 2):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert proc.returncode == 130
    written = [line["old_job_id"] for line in output_lines(out)]
    assert 2 <= len(written) < len(ids)
    checkpoint = (out.parent / (out.name + ".checkpoint")).read_text().splitlines()
    marks = [json.loads(mark)["old_job_id"] for mark in checkpoint]
    # synced on the way out; Ctrl-C between a job's output line and its mark can drop that mark,
    # which the next run recovers from the output
    assert marks == written[: len(marks)] and len(written) - len(marks) <= 1
    assert f"this run: llm={len(written)}" in stdout
