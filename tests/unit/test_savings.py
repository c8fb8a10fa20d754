"""``tersify savings``: the readers on sample sessions of two agents; the arithmetic worked out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.contract import Method, ToolType
from tersify.settings import Settings
from tersify.settings.values import PriceTable, model_name
from tersify.worker.model.tokens import estimate_tokens
from tersify.worker.quality.corpus import load_cases
from tersify.worker.savings.compute import local_rows, outputs_of
from tersify.worker.savings.prices import Prices
from tersify.worker.savings.reader import LogFormat, read_logs
from tersify.worker.savings.report import Report, Row, Tally, row_of
from tersify.worker.savings.shrink import Shrunk
from tersify.worker.savings.transcript import ToolOutput
from tests.agentlogs import MODEL, long_session
from tests.sessions import build

SESSIONS = Path(__file__).resolve().parents[1] / "sessions"
CLAUDE = SESSIONS / "claude-code" / "67f4cc9c-9aac-59ec-b5f1-d2284c0f8e3a.jsonl"
SHELL = SESSIONS / "shell-agent" / "build-machine-audit.messages.json"


def output(text: str, later: int = 3, model: str | None = "m") -> ToolOutput:
    """A tool output with nothing but what the arithmetic needs."""
    return ToolOutput("s", "test", model, "Bash", "make", text, 0, later, Path("x"))


def claude_lines() -> list[dict[str, Any]]:
    """The sample Claude Code session's lines, parsed."""
    return [json.loads(raw) for raw in CLAUDE.read_text(encoding="utf-8").splitlines()]


def corpus_outputs() -> set[str]:
    """Every output of ``tests/corpus`` (both splits), as recorded."""
    return {case.output for split in ("tune", "check") for case in load_cases(build.CORPUS / split)}


def test_the_committed_samples_are_what_the_build_script_writes(tmp_path: Path) -> None:
    written = build.build(tmp_path)
    assert [p.relative_to(tmp_path) for p in written] == [
        CLAUDE.relative_to(SESSIONS),
        SHELL.relative_to(SESSIONS),
    ]
    for path in written:
        assert path.read_bytes() == (SESSIONS / path.relative_to(tmp_path)).read_bytes()


def test_a_claude_code_session_gives_every_tool_result_with_its_tool_and_later_calls() -> None:
    reading = read_logs([CLAUDE])
    (transcript,) = reading.transcripts
    assert reading.skips == [] and transcript.session == CLAUDE.stem
    assert transcript.agent == "claude-code"
    assert {o.model for o in transcript.outputs} == {build.CLAUDE_MODEL}
    # worked out here from the raw lines: each result's tool, text and the calls after it
    uses: dict[str, dict[str, Any]] = {}
    ids: list[str] = []
    expected: list[tuple[str, str | None, str]] = []
    seen: list[int] = []
    for entry in claude_lines():
        message = entry.get("message") or {}
        blocks = message.get("content") if isinstance(message.get("content"), list) else []
        if entry.get("type") == "assistant":
            ids += [message["id"]] if message["id"] not in ids else []
            uses.update({b["id"]: b for b in blocks if b["type"] == "tool_use"})
        for block in blocks if entry.get("type") == "user" else []:
            use, body = uses[block["tool_use_id"]], block["content"]
            body = body if isinstance(body, str) else "\n".join(b["text"] for b in body)
            command = use["input"].get("command") or json.dumps(
                use["input"], sort_keys=True, ensure_ascii=False
            )
            expected.append((use["name"], command, body))
            seen.append(len(ids))
    got = [(o.tool_name, o.command, o.text) for o in transcript.outputs]
    assert got == expected and len(got) == 8
    assert transcript.calls == len(ids) == 10
    assert [o.later_calls for o in transcript.outputs] == [len(ids) - n for n in seen]
    names = {name for name, _, _ in got}
    assert {"Bash", "Read", "Grep", "Edit", "mcp__filesystem__read_text_file"} <= names
    assert got[0][1] is not None and got[0][1].endswith("pytest -q --durations=12")


def test_the_claude_code_sample_splits_a_response_over_lines_and_holds_real_outputs() -> None:
    lines = [e for e in claude_lines() if e.get("type") == "assistant"]
    per_message = [
        sum(e["message"]["id"] == i for e in lines) for i in {e["message"]["id"] for e in lines}
    ]
    assert max(per_message) == 3  # text and two parallel tool calls of one response
    outputs = read_logs([CLAUDE]).transcripts[0].outputs
    real = corpus_outputs()  # printed here: whole, or some lines of a file (Read with a limit)
    kinds = [
        "whole" if o.text in real else "lines" if any(o.text in r for r in real) else "own"
        for o in outputs
    ]
    assert kinds == [{"Read": "lines", "Edit": "own"}.get(o.tool_name, "whole") for o in outputs]
    assert sum(len(o.text) > Settings().summarize_threshold_chars for o in outputs) == 6


def test_a_shell_agent_session_reads_as_an_openai_message_list() -> None:
    reading = read_logs([SHELL])
    (transcript,) = reading.transcripts
    document = json.loads(SHELL.read_text(encoding="utf-8"))
    messages = document["messages"]
    assert transcript.session == "build-machine-audit" and transcript.agent == "messages"
    tool_messages = [m for m in messages if m["role"] == "tool"]
    assert [o.text for o in transcript.outputs] == [m["content"] for m in tool_messages]
    real = corpus_outputs()
    assert all(o.text in real for o in transcript.outputs)
    assert {o.tool_name for o in transcript.outputs} == {"bash"}
    calls = [m for m in messages if m["role"] == "assistant"]
    second = json.loads(calls[1]["tool_calls"][0]["function"]["arguments"])["command"]
    assert transcript.outputs[1].command == second
    assert {o.model for o in transcript.outputs} == {document["model"]}
    assert transcript.calls == len(calls) == 11
    assert transcript.outputs[-1].later_calls == 1  # only the final report read the last one
    assert transcript.outputs[0].later_calls == len(calls) - 1


ROLLOUT = [
    {"type": "session_meta", "payload": {"id": "rollout-1", "cwd": "/w"}},
    {"type": "turn_context", "payload": {"model": "gpt-5-codex"}},
    {"type": "response_item", "payload": {"type": "message", "role": "user", "content": []}},
    {"type": "response_item", "payload": {"type": "reasoning", "summary": []}},
    {
        "type": "response_item",
        "payload": {
            "type": "function_call",
            "name": "shell",
            "call_id": "c1",
            "arguments": json.dumps({"command": ["bash", "-lc", "rg -n needle src"]}),
        },
    },
    {"type": "event_msg", "payload": {"type": "token_count"}},
    {
        "type": "response_item",
        "payload": {
            "type": "function_call_output",
            "call_id": "c1",
            "output": json.dumps({"output": "src/a.py:1:needle\n", "metadata": {"exit_code": 0}}),
        },
    },
    {
        "type": "response_item",
        "payload": {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "call_id": "c2",
            "input": "*** Begin Patch",
        },
    },
    {
        "type": "response_item",
        "payload": {"type": "custom_tool_call_output", "call_id": "c2", "output": "Success."},
    },
    {"type": "compacted", "payload": {"message": "summary"}},
    {"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": []}},
]


def test_a_codex_rollout_reads_calls_outputs_the_model_and_a_compaction(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2026-01-01.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in ROLLOUT) + '{"torn": ')
    reading = read_logs([tmp_path])
    (transcript,) = reading.transcripts
    assert (transcript.session, transcript.agent, transcript.calls) == ("rollout-1", "codex", 3)
    first, second = transcript.outputs
    assert (first.tool_name, first.command, first.text) == (
        "shell",
        "rg -n needle src",
        "src/a.py:1:needle\n",
    )
    assert (second.tool_name, second.text, second.model) == (
        "apply_patch",
        "Success.",
        "gpt-5-codex",
    )
    assert (first.later_calls, second.later_calls) == (1, 0)  # the compaction dropped them
    assert [(s.line, s.reason) for s in reading.skips] == [(12, "not JSON (corrupt or truncated)")]


def test_an_older_codex_rollout_without_line_wrappers_reads_too(tmp_path: Path) -> None:
    path = tmp_path / "rollout-old.jsonl"
    items = [line["payload"] for line in ROLLOUT if line["type"] == "response_item"]
    meta = {"id": "old-1", "timestamp": "2025-05-01T00:00:00Z", "instructions": None}
    path.write_text("".join(json.dumps(x) + "\n" for x in [meta, *items]))
    (transcript,) = read_logs([path], LogFormat.AUTO).transcripts
    assert transcript.session == "old-1" and len(transcript.outputs) == 2


def test_an_anthropic_message_list_in_jsonl_and_an_unknown_file_are_told_apart(
    tmp_path: Path,
) -> None:
    messages = [
        {"role": "user", "content": "list it"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a\nb"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "two files"}]},
    ]
    (tmp_path / "chat.jsonl").write_text("".join(json.dumps(m) + "\n" for m in messages))
    (tmp_path / "other.jsonl").write_text('{"hello": 1}\n')
    reading = read_logs([tmp_path])
    (transcript,) = reading.transcripts
    assert [(o.tool_name, o.text, o.later_calls) for o in transcript.outputs] == [("ls", "a\nb", 1)]
    assert [s.reason for s in reading.skips] == ["not a Claude Code, Codex or message-list log"]


def test_a_missing_path_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match="no-such"):
        read_logs([Path("/no-such/session.jsonl")])


def test_an_output_at_the_threshold_passes_through_and_a_longer_one_pays_its_summary() -> None:
    short = output("x" * 1500)
    long = output("y" * 8000, later=4)
    row_short = row_of(
        short, Shrunk(short.text, Method.PASSTHROUGH, ToolType.COMMAND_OUTPUT), 3.0, 60
    )
    row_long = row_of(long, Shrunk("z" * 400, Method.EXTRACTIVE, ToolType.COMMAND_OUTPUT), 3.0, 60)
    assert (row_short.tokens_before, row_short.tokens_after, row_short.saved) == (375, 375, 0)
    assert (row_long.tokens_before, row_long.tokens_after) == (2000, 100 + 60)
    assert (row_long.saved, row_long.carried) == (1840, 1840 * 4)
    assert row_long.usd_once == pytest.approx(1840 * 3.0 / 1e6)
    assert row_long.usd_carried == pytest.approx(1840 * 4 * 3.0 / 1e6)
    assert (row_long.chars_before, row_long.chars_after) == (8000, 400)


def test_an_output_no_model_call_read_saves_no_dollars_and_an_unpriced_one_none() -> None:
    last = output("y" * 8000, later=0)
    row = row_of(last, Shrunk("z" * 400, Method.EXTRACTIVE, ToolType.COMMAND_OUTPUT), 3.0, 0)
    assert row.saved == 1900 and row.usd_once == 0.0 and row.usd_carried == 0.0
    free = row_of(last, Shrunk("z", Method.EXTRACTIVE, ToolType.COMMAND_OUTPUT), None, 0)
    assert free.usd_once is None and Tally.of([free]).unpriced == 1


def test_prices_match_normalized_names_exactly_and_fall_back_to_the_default() -> None:
    table = PriceTable.model_validate("claude-sonnet-4-5=3/15,gpt-4.1=2/8")
    prices = Prices.of(table, "gpt-4.1=1.5/6", default=0.5)
    assert model_name("claude-sonnet-4-5-20250929") == "claude-sonnet-4-5"
    assert model_name("google/Gemini-3-Pro-Preview") == "gemini-3-pro-preview"
    assert prices.input_price("claude-sonnet-4-5-20250929") == 3.0
    assert prices.input_price("openai/gpt-4.1-2025-04-14") == 1.5  # --prices over the setting
    assert prices.input_price("claude-sonnet-4") == 0.5  # not a prefix match: the default
    assert Prices.of(PriceTable.model_validate("a=1/2")).input_price(None) is None
    with pytest.raises(ValueError, match="bad model price"):
        Prices.of(table, "gpt-5=cheap")


def test_the_default_agent_prices_parse_and_price_the_sample_models() -> None:
    prices = Prices.of(Settings().agent_model_prices)
    assert prices.input_price(build.CLAUDE_MODEL) == 5.0
    assert prices.input_price(build.SHELL_MODEL) == 0.25


def test_a_generated_long_session_adds_up_to_what_its_outputs_say(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    written = long_session(path, calls=300, seed=7)
    config = Settings()
    reading = read_logs([path])
    prices = Prices.of(PriceTable.model_validate(f"{MODEL}=2/10"))
    rows = local_rows(config, outputs_of(reading), prices, 60)
    assert [r.tokens_before for r in rows] == [estimate_tokens(w.text) for w in written]
    assert [r.later_calls for r in rows] == [300 - w.call for w in written]
    over = [len(w.text) > config.summarize_threshold_chars for w in written]
    assert [r.method != "passthrough" for r in rows] == over
    total = Tally.of(rows)
    assert total.summarized == sum(over) and 0 < total.summarized < 300
    assert total.saved == sum(r.tokens_before - r.tokens_after for r in rows)
    assert total.usd_carried == pytest.approx(sum(r.carried for r in rows) * 2 / 1e6)
    assert total.saved > 0.5 * total.tokens_before  # tens-of-KB outputs shrink to ~2000 chars


rows_strategy = st.lists(
    st.builds(
        Row,
        session=st.sampled_from(["a", "b", "c"]),
        agent=st.just("test"),
        model=st.sampled_from(["m1", None]),
        index=st.integers(0, 50),
        tool_name=st.just("Bash"),
        tool_type=st.sampled_from([t.value for t in ToolType]),
        method=st.sampled_from(["passthrough", "extractive", "llm"]),
        chars_before=st.integers(0, 10**6),
        chars_after=st.integers(0, 10**4),
        tokens_before=st.integers(0, 10**6),
        tokens_after=st.integers(0, 10**4),
        later_calls=st.integers(0, 200),
        price=st.one_of(st.none(), st.floats(0, 100)),
        summary_usd=st.floats(0, 1),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(rows_strategy)
def test_every_grouping_of_the_rows_adds_up_to_the_total(rows: list[Row]) -> None:
    report = Report(rows, files=1, sessions=3, skips=[], threshold=1500, hint_tokens=60)
    total = report.overall()
    for key in (lambda r: r.session, lambda r: r.tool_type, lambda r: r.model or "-"):
        parts = report.by(key).values()
        assert sum(t.outputs for t in parts) == total.outputs
        assert sum(t.saved for t in parts) == total.saved
        assert sum(t.carried for t in parts) == total.carried
        assert sum(t.usd_carried for t in parts) == pytest.approx(total.usd_carried)
    assert total.saved == total.tokens_before - total.tokens_after
    as_json = report.as_json(top=5)
    assert as_json["total"]["saved"] == total.saved and len(as_json["largest"]) == min(5, len(rows))


def test_a_session_found_in_several_files_counts_once_with_its_longest_copy(tmp_path: Path) -> None:
    lines = CLAUDE.read_text(encoding="utf-8").splitlines(keepends=True)
    results = sum(e.get("toolUseResult") is not None for e in claude_lines())
    (tmp_path / "a-checkpoint.jsonl").write_text("".join(lines[: len(lines) // 2]))
    (tmp_path / "b-full.jsonl").write_text("".join(lines))
    reading = read_logs([tmp_path])
    (transcript,) = reading.transcripts
    assert reading.repeated == 1 and len(transcript.outputs) == results
    assert transcript.source.name == "b-full.jsonl"


def test_a_json_document_under_a_jsonl_name_is_one_skip_not_one_per_line(tmp_path: Path) -> None:
    other = {"sessionId": "s", "messages": [{"type": "gemini", "content": "hi"}]}
    (tmp_path / "gemini.jsonl").write_text(json.dumps(other, indent=2))
    reading = read_logs([tmp_path])
    assert reading.transcripts == [] and len(reading.skips) == 1
