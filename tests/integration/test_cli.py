"""The ``tersify`` command line against a real Redis and a real worker."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tersify.settings import Settings
from tersify.worker.cli.demo import load_examples
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import tersify, tersify_argv

StartWorker = Callable[..., WorkerProcess]
RESULT_FIELDS = {
    "job_id",
    "text",
    "method",
    "tool_type",
    "provider",
    "model",
    "chars_in",
    "chars_out",
    "input_tokens",
    "output_tokens",
    "fallback_reason",
}


def test_submit_prints_the_summary_as_json(start_worker: StartWorker, settings: Settings) -> None:
    start_worker()
    log = next(ex for ex in load_examples() if ex.file == "pytest_failures.txt")
    done = tersify(
        settings,
        "submit",
        "-",
        "--tool",
        "bash",
        "--command",
        "pytest",
        "--json",
        "--query",
        "which tests fail",
        stdin=log.output,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result.keys() >= RESULT_FIELDS
    assert (result["tool_type"], result["method"]) == ("CommandOutput", "extractive")
    assert "test_parse_amount_handles_european_format" in result["text"]


def test_no_wait_prints_the_job_id_and_result_fetches_it(
    start_worker: StartWorker, settings: Settings, tmp_path: Path
) -> None:
    start_worker()
    path = tmp_path / "listing.txt"
    path.write_text("\n".join(f"-rw-r--r-- 1 u g {i} Jan 1 file_{i}.py" for i in range(200)))
    submitted = tersify(settings, "submit", str(path), "--tool", "ls", "--no-wait")
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip()
    fetched = tersify(settings, "result", job_id, "--wait", "30", "--json")
    assert fetched.returncode == 0, fetched.stderr
    assert json.loads(fetched.stdout)["job_id"] == job_id
    unknown = tersify(settings, "result", "0" * 32)
    assert unknown.returncode == 1
    assert "JobNotFoundError" in unknown.stderr


def test_a_short_output_is_printed_back_without_a_worker(settings: Settings) -> None:
    done = tersify(settings, "submit", "-", "--tool", "bash", "--json", stdin="ok\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["method"] == "passthrough"


def test_bad_input_exits_non_zero_with_a_typed_message(settings: Settings) -> None:
    done = tersify(
        settings, "submit", "-", "--tool", "bash", "--session", "has space", stdin="x" * 5000
    )
    assert done.returncode == 1
    assert "InvalidJobError" in done.stderr


def test_an_oversized_pipe_is_refused_after_reading_one_byte_past_the_cap(
    settings: Settings,
) -> None:
    # the writer blocks once the CLI stops reading: with the whole pipe read, it would finish
    writer = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfor _ in range(64): sys.stdout.write('x' * 65536)"],
        stdout=subprocess.PIPE,
    )
    try:
        done = subprocess.run(
            tersify_argv("submit", "-", "--tool", "bash"),
            env=settings.child_env(redis_url=settings.redis_url, max_output_bytes="65536"),
            stdin=writer.stdout,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 1
        assert "OutputTooLargeError" in done.stderr and "65536" in done.stderr
        assert writer.poll() is None  # most of the pipe was never read
    finally:
        writer.kill()
        writer.wait(timeout=10)
        assert writer.stdout is not None
        writer.stdout.close()


def test_gate_status_and_wait_report_an_idle_session_as_open(settings: Settings) -> None:
    status = tersify(settings, "gate", "status", "nobody", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["open"] is True
    assert tersify(settings, "gate", "wait", "nobody", "--timeout", "1").returncode == 0


def test_gate_wait_times_out_while_a_job_holds_the_gate(settings: Settings, producer) -> None:
    token = producer.gate.close_for("busy", "job-held-1", tool_type="CommandOutput")
    status = json.loads(tersify(settings, "gate", "status", "busy", "--json").stdout)
    assert status["open"] is False
    assert [job["job_id"] for job in status["jobs"]] == ["job-held-1"]
    assert tersify(settings, "gate", "wait", "busy", "--timeout", "0.5").returncode == 1
    producer.gate.release("busy", "job-held-1", token)
    assert tersify(settings, "gate", "wait", "busy", "--timeout", "5").returncode == 0


def test_compact_prints_the_new_message_list_as_json(
    start_worker: StartWorker, settings: Settings, tmp_path: Path
) -> None:
    start_worker()
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} about x.py. " * 40}
        for i in range(12)
    ]
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages))
    done = tersify(settings, "compact", str(path), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["method"] == "fallback"  # no model configured: the extractive summary
    assert len(result["messages"]) < len(messages)
    assert "turn 4 about x.py" in result["summary"]  # a compacted request, quoted
