"""What a new user meets in the first hour, with real workers: the per-user session-log
directory that every command finds, a worker that says what it runs with and what it cannot do,
and an output far past the cap summarized with the cut stated."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.store.sessionlog import session_files
from tests.helpers import json_lines, tersify, tersify_argv, wait_for
from tests.integration.conftest import API_KEY

LONG = "".join(f"step {i}: compiled module_{i}.py\n" for i in range(400))


def events(worker: WorkerProcess, name: str) -> list[dict[str, object]]:
    """The worker's JSON log lines of one event."""
    return [e for e in json_lines(worker.log()) if e.get("event") == name]


def test_forget_run_from_any_directory_deletes_the_logs_a_worker_wrote_elsewhere(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The default directory, per user: XDG_STATE_HOME points it into the test's own folder.
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.delenv("TERSIFY_SESSION_LOG_DIR", raising=False)
    here, there = tmp_path / "worker-cwd", tmp_path / "elsewhere"
    here.mkdir()
    there.mkdir()
    worker = WorkerProcess(settings, tmp_path, cwd=here, log_format="json").start()
    try:
        done = tersify(settings, "submit", "-", "--tool", "bash", "--session", "mine", stdin=LONG)
        assert done.returncode == 0, done.stderr
        directory = state / "tersify" / "sessions"
        wait_for(lambda: session_files(directory, "mine"), "the session's log file")
        (configured,) = events(worker, "worker_configured")
        assert configured["session_log_dir"] == str(directory)
    finally:
        worker.stop()
    forgotten = subprocess.run(
        tersify_argv("forget", "mine"),
        env=settings.child_env(redis_url=settings.redis_url),
        cwd=there,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert forgotten.returncode == 0, forgotten.stderr
    assert forgotten.stdout.endswith(f"1 log file(s) in {directory}\n")
    assert session_files(directory, "mine") == []
    assert not list(here.rglob("*.jsonl")) and not list(there.rglob("*.jsonl"))


def test_forget_warns_when_the_directory_it_searched_does_not_exist(
    settings: Settings, tmp_path: Path
) -> None:
    missing = tmp_path / "never-made"
    done = tersify(settings, "forget", "s1", session_log_dir=str(missing))
    assert done.returncode == 0
    assert done.stdout.endswith(f"0 log file(s) in {missing}\n")
    assert done.stderr == (
        f"tersify forget: warning: {missing} does not exist, so no log file was deleted here; "
        "session logs are where workers write them (TERSIFY_SESSION_LOG_DIR on each worker "
        "host)\n"
    )


def test_a_worker_told_to_start_without_its_key_says_every_job_will_fall_back(
    settings: Settings, tmp_path: Path
) -> None:
    worker = WorkerProcess(
        settings,
        tmp_path,
        log_format="json",
        session_log_dir=str(tmp_path / "sessions"),
        summary_provider="anthropic",
        allow_missing_key="true",
    ).start()
    try:
        done = tersify(settings, "submit", "-", "--tool", "bash", "--json", stdin=LONG)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        (warned,) = events(worker, "startup_check_warned")
    finally:
        worker.stop()
    assert (result["method"], result["provider"]) == ("fallback", "anthropic")  # who failed
    assert warned["check"] == "provider"
    assert warned["detail"] == (
        "TERSIFY_SUMMARY_PROVIDER=anthropic but TERSIFY_ANTHROPIC_API_KEY is unset: starting "
        "anyway (TERSIFY_ALLOW_MISSING_KEY): every job will fall back to truncation"
    )


def test_a_worker_logs_what_it_runs_with_and_warns_of_a_model_api_out_of_reach(
    settings: Settings, tmp_path: Path
) -> None:
    dead = "http://127.0.0.1:9"  # the discard port: nothing listens there
    worker = WorkerProcess(
        settings,
        tmp_path,
        log_format="json",
        session_log_dir=str(tmp_path / "sessions"),
        anthropic_api_key=API_KEY,
        anthropic_base_url=dead,
    ).start()
    worker.stop()
    (configured,) = events(worker, "worker_configured")
    (warned,) = events(worker, "startup_check_warned")
    assert API_KEY not in worker.log()
    assert {k: configured[k] for k in ("provider", "base_url", "api_key", "redis")} == {
        "provider": "anthropic",
        "base_url": dead,
        "api_key": "set",
        "redis": settings.redis_url,
    }
    assert warned["detail"] == (
        f"cannot reach the anthropic API at {dead} (connection refused): jobs will fall back to "
        "truncation until it answers (TERSIFY_ANTHROPIC_BASE_URL)"
    )


def test_doctor_prints_every_check_and_fails_on_what_would_refuse_a_worker(
    settings: Settings, tmp_path: Path
) -> None:
    logs = str(tmp_path / "sessions")
    sound = tersify(settings, "doctor", "--json", session_log_dir=logs)
    assert sound.returncode == 0, sound.stdout + sound.stderr
    checks = [json.loads(line) for line in sound.stdout.splitlines()]
    assert [c["check"] for c in checks] == [
        "redis",
        "provider",
        "webhooks",
        "session log",
        "workers",
        "gateway",
    ]
    assert [c["level"] for c in checks] == ["ok", "ok", "ok", "ok", "warn", "ok"]  # no worker
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    blocked = tersify(settings, "doctor", "--json", session_log_dir=str(blocker / "sessions"))
    assert blocked.returncode == 0  # outputs would not be logged: the worker still serves
    (log_check,) = [
        c for c in map(json.loads, blocked.stdout.splitlines()) if c["check"] == "session log"
    ]
    assert (log_check["level"], log_check["detail"]) == (
        "warn",
        f"cannot write to {blocker / 'sessions'} (not a directory): full outputs will not be "
        "logged; fix it or set TERSIFY_SESSION_LOG_DIR",
    )
    unsound = tersify(settings, "doctor", session_log_dir=logs, failover_provider="openai")
    assert unsound.returncode == 1
    (failed,) = [line for line in unsound.stdout.splitlines() if line.startswith("fail")]
    assert failed.split(None, 2)[1:] == [
        "provider",
        "TERSIFY_FAILOVER_PROVIDER=openai but TERSIFY_OPENAI_API_KEY is unset: set "
        "TERSIFY_OPENAI_API_KEY, or TERSIFY_ALLOW_MISSING_KEY=true to start with fallbacks only",
    ]


@pytest.mark.slow
def test_a_40_mb_output_is_summarized_with_the_cut_stated_and_read_back_whole(
    settings: Settings, tmp_path: Path
) -> None:
    line = "+    value_{0} = compute(item_{0}, factor={1})  # adjusts weights"
    lines = [line.format(i, i % 13) for i in range(620_000)]
    lines[310_000] = "error: build failed at step 310000: the cache is corrupt"
    path = tmp_path / "git-log-p.txt"
    path.write_text("\n".join(lines) + "\n")
    size = path.stat().st_size
    assert size > 40_000_000
    worker = WorkerProcess(
        settings, tmp_path, log_format="json", session_log_dir=str(tmp_path / "sessions")
    ).start()
    try:
        with path.open("rb") as output:
            done = subprocess.run(
                tersify_argv("submit", "-", "--tool", "bash", "--command", "git log -p", "--json"),
                env=settings.child_env(
                    redis_url=settings.redis_url, session_log_dir=str(tmp_path / "sessions")
                ),
                stdin=output,
                capture_output=True,
                text=True,
                timeout=110,
                check=False,
            )
    finally:
        worker.stop()
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    cut = result["cut"]
    assert (cut["bytes_in"], cut["lines_in"], cut["bytes_stored"]) == (size, 620_000, size)
    assert cut["bytes_kept"] <= settings.max_output_bytes and cut["kept_between"] == 1
    assert result["text"].startswith(f"[tersify: the output was {size:,} bytes in 620,000 lines")
    middle = tersify(settings, "output", result["output_ref"], "--grep", "cache is corrupt")
    assert middle.stdout == "310001\terror: build failed at step 310000: the cache is corrupt\n"
    assert len(result["text"]) < 10_000  # a summary, not the output
