"""Re-reads counted in the one read operation: labels, the counting round, the kept lines."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tersify.client import rereads
from tersify.client.core import Round, run_sync
from tersify.client.outputs import read_output, window
from tersify.contract import Method, ToolType
from tersify.errors import JobNotFoundError, RedisUnavailableError
from tersify.settings import Settings
from tersify.store import keys, payloads
from tests.unit.test_client_core import Script

OUTPUT = "".join(f"line {i}: value {i * 7}\n" for i in range(1, 301))
RESULT = json.dumps(
    {
        "method": "extractive",
        "tool_type": "CommandOutput",
        "finished_at": "2026-11-02T10:00:00+00:00",
    }
)
LINK = [b"s1", b"digest", b"job-0001", b"CommandOutput"]


def test_a_read_is_counted_after_its_lines_in_one_more_round_trip() -> None:
    script = Script([LINK], [payloads.encode(OUTPUT)[1], RESULT.encode()], [1])
    found = run_sync(read_output(Settings(), "a" * 32, 9, 2), script)
    assert [line.number for line in found.lines] == [10, 11]
    counting = script.steps[2]
    assert isinstance(counting, Round) and counting.commands[0][0] == "eval"
    args = counting.commands[0][1]
    assert args[2:6] == (
        keys.REREADS,
        keys.REREAD_SUMMARIES,
        keys.reread_mark("job-0001"),
        keys.REREADS_RECENT,
    )
    assert args[6] == "CommandOutput|extractive"
    assert float(args[8]) == 1_793_613_600.0  # scored by the summary's finish time


def test_a_count_that_fails_still_hands_the_lines_back() -> None:
    script = Script([LINK], [payloads.encode(OUTPUT)[1], None], RedisUnavailableError("down"))
    found = run_sync(read_output(Settings(), "a" * 32, 0, 3), script)
    assert found.text == "line 1: value 7\nline 2: value 14\nline 3: value 21"


def test_a_refused_read_counts_nothing() -> None:
    script = Script([[b"s2", b"digest", b"job-0001", b"CommandOutput"]])
    with pytest.raises(JobNotFoundError):
        run_sync(read_output(Settings(), "a" * 32, allows="s1".__eq__), script)
    assert len(script.steps) == 1


def test_a_link_that_names_no_job_is_read_without_counting() -> None:
    script = Script([[b"s1", b"digest", None, None]], [payloads.encode(OUTPUT)[1]])
    found = run_sync(read_output(Settings(), "a" * 32, 0, 1), script)
    assert found.lines[0].text == "line 1: value 7" and len(script.steps) == 2


def test_kept_lines_are_queued_for_the_session_log_only_when_asked() -> None:
    blob = payloads.encode(OUTPUT)[1]
    off = Script([LINK], [blob, RESULT], [1])
    run_sync(read_output(Settings(), "a" * 32, 0, 2), off)
    on = Script([LINK], [blob, RESULT], [1, 1, 1])
    run_sync(read_output(Settings(keep_read_lines=True), "a" * 32, 0, 2, grep="line 20:"), on)
    first, second = off.steps[2], on.steps[2]
    assert isinstance(first, Round) and isinstance(second, Round)
    assert [c[0] for c in first.commands] == ["eval"]
    assert [c[0] for c in second.commands][:2] == ["eval", "eval"]  # counted, then queued
    queued = second.commands[1][1]
    assert queued[2] == keys.PASSTHROUGH_LOG and queued[6].startswith("reread-")
    entry = json.loads(queued[7])["reread"]
    assert (entry["job_id"], entry["session_id"], entry["grep"]) == ("job-0001", "s1", "line 20:")
    assert entry["lines"] == [[20, "line 20: value 140"]] and entry["total_lines"] == 300
    assert (entry["tool_type"], entry["method"], entry["cut"]) == (
        "CommandOutput",
        "extractive",
        False,
    )


def test_the_summary_kind_falls_back_to_unknown_without_a_readable_result() -> None:
    assert rereads.summary_kind(b"SearchResults", None) == ("SearchResults", "unknown", None)
    assert rereads.summary_kind(None, "not json") == ("unknown", "unknown", None)
    assert rereads.summary_kind(None, RESULT)[:2] == ("CommandOutput", "extractive")


def test_kept_lines_stop_at_the_size_cap_and_say_so() -> None:
    long_line = "x" * (rereads.KEPT_CHARS // 3 + 1)
    found = window("a" * 32, "\n".join([long_line] * 5), 0, 5, None)
    push = rereads.keep_lines(Settings(), "job-1", "s1", found, ("WebContent", "llm", None))[0]
    entry = json.loads(push[1][7])["reread"]
    assert len(entry["lines"]) == 2 and entry["cut"] is True


@given(st.sampled_from(list(ToolType)), st.sampled_from(list(Method)))
def test_a_field_splits_back_into_its_tool_type_and_method(tool: ToolType, method: Method) -> None:
    assert rereads.split_field(rereads.field(tool.value, method.value)) == (
        tool.value,
        method.value,
    )
