"""The full output by link: ``output_ref`` on results, read back by the producer, CLI and HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tersify.client import Producer
from tersify.contract import Method
from tersify.errors import InvalidJobError, JobNotFoundError
from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import tersify
from tests.integration.test_api import SCOPED, ApiServer, client

LINES = [
    f"{i:04d} commit {i * 7919 % 100_000:05x} {'fix' if i % 10 == 0 else 'add'} thing {i}"
    for i in range(1, 501)
]
OUTPUT = "\n".join(LINES) + "\n"
StartWorker = Callable[..., WorkerProcess]


def summarized(producer: Producer, session_id: str = "team-a/s1") -> str:
    """Submit OUTPUT, wait for its summary, and return the result's output_ref."""
    result = producer.submit(session_id=session_id, tool_name="git_log", output=OUTPUT).wait(30)
    assert result.method is not Method.PASSTHROUGH
    assert result.output_ref is not None
    assert OUTPUT not in result.text
    return result.output_ref


def test_a_summary_links_back_to_its_full_output_line_for_line(
    producer: Producer, start_worker: StartWorker
) -> None:
    start_worker()
    ref = summarized(producer)
    part = producer.read_output(ref, 99, 3)
    assert [(line.number, line.text) for line in part.lines] == [
        (100, LINES[99]),
        (101, LINES[100]),
        (102, LINES[101]),
    ]
    assert (part.total_lines, part.next_offset) == (500, 102)
    fixes = producer.read_output(ref, grep="FIX", limit=1000)
    assert [line.text for line in fixes.lines] == [line for line in LINES if " fix " in line]
    assert fixes.next_offset is None
    assert producer.read_output(ref, session_id="team-a/s1").lines[0].text == LINES[0]
    with pytest.raises(JobNotFoundError):
        producer.read_output(ref, session_id="team-b/s1")  # another session's output
    with pytest.raises(JobNotFoundError):
        producer.read_output("0" * 32)
    with pytest.raises(InvalidJobError):
        producer.read_output(ref, limit=0)


def test_a_passthrough_result_has_no_link_its_text_is_the_output(producer: Producer) -> None:
    result = producer.submit(session_id="s", tool_name="git_log", output="one line\n").wait(1)
    assert (result.method, result.output_ref) == (Method.PASSTHROUGH, None)


def test_tersify_output_prints_numbered_lines_and_the_json_range(
    producer: Producer, start_worker: StartWorker, settings: Settings
) -> None:
    start_worker()
    ref = summarized(producer)
    printed = tersify(settings, "output", ref, "--from", "10", "--limit", "2")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.splitlines() == [f" 10\t{LINES[9]}", f" 11\t{LINES[10]}"]
    assert f"tersify output {ref} --from 12" in printed.stderr  # the next line, as numbered
    as_json = tersify(settings, "output", ref, "--grep", "thing 250", "--json")
    assert [line["number"] for line in json.loads(as_json.stdout)["lines"]] == [250]
    past = tersify(settings, "output", ref, "--from", "99999")
    assert (past.returncode, past.stdout) == (2, "")
    assert past.stderr == (
        "tersify output: --from 99999 is past the end: the output has 500 lines "
        f"(tersify output {ref} --from 301 prints the last ones)\n"
    )
    last = tersify(settings, "output", ref, "--from", "500")
    assert (last.returncode, last.stdout) == (0, f"500\t{LINES[499]}\n")
    refused = tersify(settings, "output", ref, "--session", "team-b/x")
    assert refused.returncode == 1
    assert refused.stderr == (
        f"tersify output: no output {ref!r} (unknown, expired, or another session's)\n"
    )


def test_get_v1_outputs_serves_ranges_to_the_jobs_session_only(
    producer: Producer, start_worker: StartWorker, api_server: ApiServer
) -> None:
    start_worker()
    ref = summarized(producer, "team-a/s1")
    other = summarized(producer, "team-b/s1")
    with client(api_server, SCOPED) as http:
        got = http.get(f"/v1/outputs/{ref}", params={"offset": 498, "limit": 10})
        assert got.status_code == 200, got.text
        body = got.json()
        assert [line["text"] for line in body["lines"]] == LINES[498:]
        assert body["next_offset"] is None
        grep = http.get(f"/v1/outputs/{ref}", params={"grep": "thing 42", "limit": 2})
        assert [line["number"] for line in grep.json()["lines"]] == [42, 420]
        assert grep.json()["next_offset"] == 420
        assert http.get(f"/v1/outputs/{other}").status_code == 404  # team-b's, not this token's
        assert http.get(f"/v1/outputs/{ref}", params={"limit": 0}).status_code == 422
        assert http.get("/v1/outputs/not-a-ref").status_code == 422
    with client(api_server) as http:
        assert http.get(f"/v1/outputs/{other}").json()["total_lines"] == 500
