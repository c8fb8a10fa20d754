"""The ``tersify`` command line against a real Redis and a real worker."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tersify.settings import Settings
from tersify.worker.cli.demo import load_examples
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import tersify

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
    assert unknown.stderr == (
        f"tersify result: no job {'0' * 32!r} (never submitted, or its result expired)\n"
    )


def test_a_short_output_is_printed_back_without_a_worker(settings: Settings) -> None:
    done = tersify(settings, "submit", "-", "--tool", "bash", "--json", stdin="ok\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["method"] == "passthrough"


def test_plain_output_shows_the_job_the_method_and_the_full_outputs_ref(
    start_worker: StartWorker, settings: Settings
) -> None:
    start_worker()
    log = next(ex for ex in load_examples() if ex.file == "pytest_failures.txt")
    done = tersify(
        settings, "submit", "-", "--tool", "bash", "--command", "pytest", stdin=log.output
    )
    assert done.returncode == 0, done.stderr
    header, ref_line = done.stderr.splitlines()
    job_id = header.split()[2]
    assert header.startswith(f"# job {job_id} · CommandOutput · extractive · ")
    ref = ref_line.removeprefix("# full output: tersify output ")
    assert len(ref) == 32
    again = tersify(settings, "result", job_id)
    assert again.returncode == 0 and again.stdout == done.stdout
    assert again.stderr == done.stderr


def test_a_pipe_past_the_cap_is_read_to_its_end_and_summarized_with_the_cut_stated(
    start_worker: StartWorker, settings: Settings
) -> None:
    start_worker(max_output_bytes="65536")
    lines = [f"step {i}: ok" for i in range(40_000)]
    lines[20_000] = "error: the index of step 20000 is corrupt"
    done = tersify(
        settings, "submit", "-", "--tool", "bash", "--json", stdin="\n".join(lines),
        max_output_bytes="65536",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["cut"]["bytes_in"] == len("\n".join(lines))
    assert result["cut"]["lines_in"] == 40_000 and result["cut"]["kept_between"] >= 1
    assert result["text"].startswith("[tersify: the output was ")
    middle = tersify(settings, "output", result["output_ref"], "--grep", "corrupt")
    assert middle.stdout == "20001\terror: the index of step 20000 is corrupt\n"


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
