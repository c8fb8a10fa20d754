"""The compaction corpus as committed: each case's source and facts, the split by agent, and the
converters that rebuild its messages from each agent's own session format.

The messages themselves are built from public snapshots (``build.py --mirror DIR``) and are not
in the repository; what is, is checked here on every run: the facts files, and each converter
on a small session of its format written out below.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tersify.chat.messages import parse
from tersify.worker.quality.conversations import FactKind

CORPUS = Path(__file__).resolve().parents[1] / "compaction-corpus"
sys.path.insert(0, str(CORPUS))

from build import window  # noqa: E402 (the corpus's own scripts, beside its cases)
from formats import FORMATS  # noqa: E402
from formats.openai import SESSION, SUMMARY  # noqa: E402

Msg = dict[str, Any]
METAS = sorted(p for p in CORPUS.glob("*/*.json") if p.name.count(".") == 1)
_WINDOW = re.compile(r"^(?:whole|before-first-summary|session \S.*)$")


def meta(path: Path) -> Msg:
    loaded = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


@pytest.mark.parametrize("path", METAS, ids=[f"{p.parent.name}/{p.stem}" for p in METAS])
def test_every_case_names_its_agent_source_format_window_and_facts(path: Path) -> None:
    case = meta(path)
    assert path.parent.name in ("tune", "check")
    assert case["agent"] and case["model"] and case["format"] in FORMATS
    assert _WINDOW.match(case["window"])
    source = case["source"]
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", source["repository"])
    assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    assert source["path"] and source["license"]
    kinds = [FactKind(f["kind"]) for f in case["facts"]]
    assert FactKind.TASK in kinds and len(kinds) >= 3
    assert all(
        f["any"] and all(isinstance(s, str) and s.strip() for s in f["any"]) for f in case["facts"]
    )


def test_the_corpus_holds_ten_agents_or_more_each_wholly_in_tune_or_in_check() -> None:
    sides: dict[str, set[str]] = {}
    for path in METAS:
        sides.setdefault(meta(path)["agent"], set()).add(path.parent.name)
    assert len(METAS) >= 40 and len(sides) >= 10
    assert all(len(split) == 1 for split in sides.values()), sides
    assert {"tune", "check"} == {next(iter(s)) for s in sides.values()}


def check(messages: list[Msg]) -> list[Msg]:
    """The converted messages, which the one conversation model must accept."""
    parse([m for m in messages if m["role"] not in (SESSION, SUMMARY)])
    return messages


def jsonl(*entries: Msg) -> bytes:
    return "\n".join(json.dumps(e) for e in entries).encode()


def claude_code() -> bytes:
    use = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    answer = {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}
    late = {"type": "text", "text": "Listed."}
    return jsonl(
        {"type": "user", "message": {"role": "user", "content": "List files."}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [use]}},
        {"type": "user", "message": {"role": "user", "content": [answer]}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [late]}},
        {"type": "user", "isMeta": True, "message": {"role": "user", "content": "meta"}},
        {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": "S"}},
    )


def codex() -> bytes:
    def item(payload: Msg) -> Msg:
        return {"type": "response_item", "payload": payload}

    return jsonl(
        item({"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "Go"}]}),
        item({"type": "function_call", "name": "exec_command", "call_id": "c1",
              "arguments": "{\"cmd\": \"ls\"}"}),
        item({"type": "function_call_output", "call_id": "c1", "output": "a.py"}),
        item({"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "Done."}]}),
        {"type": "compacted", "payload": {"message": "S"}},
    )  # fmt: skip


def copilot() -> bytes:
    request = {"toolCallId": "c1", "name": "bash", "arguments": {"command": "ls"}}
    return jsonl(
        {"type": "user.message", "data": {"content": "Go"}},
        {"type": "assistant.message", "data": {"content": "Listing.", "toolRequests": [request]}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "c1",
                                                     "result": {"content": "a.py"}}},
        {"type": "assistant.message", "agentId": "sub", "data": {"content": "not ours"}},
    )  # fmt: skip


def opencode() -> bytes:
    tool = {
        "type": "tool",
        "id": "p1",
        "callID": "REDACTED",
        "tool": "bash",
        "state": {"status": "completed", "input": {"command": "ls"}, "output": "a.py"},
    }
    return json.dumps({"info": {}, "messages": [
        {"info": {"role": "user"}, "parts": [{"type": "text", "text": "Go"}]},
        {"info": {"role": "assistant"}, "parts": [{"type": "text", "text": "Listing."}, tool]},
    ]}).encode()  # fmt: skip


def swe_agent() -> bytes:
    fn = {"name": "bash", "arguments": '{"command": "ls"}'}
    return json.dumps({"history": [
        {"role": "user", "content": [{"type": "text", "text": "Go"}]},
        {"role": "assistant", "content": "Listing.", "tool_calls": [{"id": "c1", "function": fn}]},
        {"role": "tool", "content": "a.py", "tool_call_ids": ["c1"]},
    ]}).encode()  # fmt: skip


def openhands() -> bytes:
    return json.dumps([
        {"kind": "MessageEvent", "llm_message": {"role": "user", "content": [{"text": "Go"}]}},
        {"kind": "ActionEvent", "llm_response_id": "r1", "thought": [{"text": "Listing."}],
         "tool_call": {"id": "c1", "name": "terminal", "arguments": "{\"command\": \"ls\"}"}},
        {"kind": "ObservationEvent", "tool_call_id": "c1",
         "observation": {"content": [{"text": "a.py"}]}},
        {"kind": "Condensation", "summary": "S"},
    ]).encode()  # fmt: skip


def aider() -> bytes:
    return (
        b"# aider chat started at 2025-01-01 10:00:00\n\n#### Go\n\nListing.\n\n"
        b"> Tokens: 1k sent\n\n#### Thanks\n\nDone.\n"
    )


def gemini() -> bytes:
    return json.dumps([
        {"role": "user", "parts": [{"text": "Go"}]},
        {"role": "model", "parts": [{"text": "thinking", "thought": True}, {"text": "Listing."},
                                    {"functionCall": {"id": "c1", "name": "ls", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "ls",
                                                         "response": {"output": "a.py"}}}]},
    ]).encode()  # fmt: skip


def crush(tmp: Path) -> bytes:
    path = tmp / "crush.db"
    with sqlite3.connect(path) as db:
        db.execute("create table messages (session_id, role, parts, created_at)")
        rows = [
            ("s1", "user", [{"type": "text", "data": {"text": "Go"}}]),
            ("s1", "assistant", [{"type": "text", "data": {"text": "Listing."}},
                                 {"type": "tool_call", "data": {"id": "c1", "name": "ls",
                                                                "input": "{}"}}]),
            ("s1", "tool", [{"type": "tool_result",
                             "data": {"tool_call_id": "c1", "content": "a.py"}}]),
        ]  # fmt: skip
        for at, (session, role, parts) in enumerate(rows):
            db.execute(
                "insert into messages values (?, ?, ?, ?)", (session, role, json.dumps(parts), at)
            )
    return path.read_bytes()


def specstory() -> bytes:
    use = (
        '<tool-use data-tool-type="shell" data-tool-name="run_terminal_cmd">\r\n<details>'
        "<summary>Tool use: **run_terminal_cmd** • Run command: ls</summary>\r\n\r\n"
        "a.py\r\n</details>\r\n</tool-use>"
    )
    return (
        "<!-- Generated by SpecStory -->\r\n\r\n# Title\r\n\r\n"
        "_**User (2026-01-01 10:00Z)**_\r\n\r\n"
        "Go\r\n\r\n---\r\n\r\n_**Agent (model default, mode Agent)**_\r\n\r\n"
        "<think><details><summary>Thought Process</summary>thinking</details></think>\r\n\r\n"
        f"---\r\n\r\nListing.\r\n\r\n---\r\n\r\n{use}\r\n\r\n---\r\n"
    ).encode()


def cline(*results: str) -> bytes:
    def say(kind: str, text: str, **extra: Any) -> Msg:
        return {"type": "say", "say": kind, "text": text, **extra}

    request = "".join(results) or "[list_files for '.'] Result:\na.py"
    return json.dumps([
        say("text", "typed by the user, repeated in the request"),
        say("api_req_started", json.dumps({"request": "Go"})),
        say("reasoning", "thinking"),
        say("text", "Listing."),
        *[say("tool", json.dumps({"tool": "listFilesTopLevel", "path": str(n)}))
          for n in range(max(1, len(results)))],
        {"type": "ask", "ask": "command_output", "text": "not ours"},
        say("api_req_started", json.dumps({"request": request})),
    ]).encode()  # fmt: skip


def pi() -> bytes:
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    said = [{"type": "thinking", "thinking": "thinking"}, {"type": "text", "text": "Listing."}]
    asked = [{"type": "text", "text": "Go"}]
    return jsonl(
        {"type": "session", "id": "s1", "cwd": "/w"},
        {"type": "message", "message": {"role": "user", "content": asked}},
        {"type": "message", "message": {"role": "assistant", "content": [*said, call]}},
        {"type": "message", "message": {"role": "toolResult", "toolCallId": "c1",
                                        "content": [{"type": "text", "text": "a.py"}]}},
        {"type": "model_change", "modelId": "m"},
        {"type": "compaction", "summary": "S"},
    )  # fmt: skip


def kimi() -> bytes:
    fn = {"name": "Bash", "arguments": '{"command": "ls"}'}
    return jsonl(
        {"role": "_checkpoint", "id": 0},
        {"role": "user", "content": "Go"},
        {"role": "_usage", "token_count": 1},
        {"role": "assistant", "content": [{"type": "think", "think": "thinking"},
                                          {"type": "text", "text": "Listing."}],
         "tool_calls": [{"type": "function", "id": "c1", "function": fn}]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "a.py"}]},
    )  # fmt: skip


def mini() -> bytes:
    messages = [
        {"role": "user", "content": "Go", "extra": {}},
        {"role": "assistant", "content": "ok"},
    ]
    return json.dumps({"messages": messages}).encode()


SAMPLES: dict[str, Callable[[Path], bytes]] = {
    "claude-code-jsonl": lambda _: claude_code(),
    "codex-rollout-jsonl": lambda _: codex(),
    "copilot-cli-events-jsonl": lambda _: copilot(),
    "opencode-export-json": lambda _: opencode(),
    "swe-agent-traj": lambda _: swe_agent(),
    "openhands-events-json": lambda _: openhands(),
    "aider-chat-history-md": lambda _: aider(),
    "gemini-contents-json": lambda _: gemini(),
    "crush-sqlite": crush,
    "mini-swe-agent-traj": lambda _: mini(),
    "specstory-md": lambda _: specstory(),
    "cline-ui-messages-json": lambda _: cline(),
    "pi-session-jsonl": lambda _: pi(),
    "kimi-context-jsonl": lambda _: kimi(),
}


def test_every_format_of_the_corpus_has_a_sample_here() -> None:
    assert set(SAMPLES) == set(FORMATS)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_converter_regroups_a_session_into_messages_keeping_every_text(
    name: str, tmp_path: Path
) -> None:
    messages = check(FORMATS[name](SAMPLES[name](tmp_path)))
    text = json.dumps(messages)
    assert '"Go"' in text or "List files." in text
    if name != "mini-swe-agent-traj":
        assert "a.py" in text or "Listing." in text
    assert "not ours" not in text and "thinking" not in text and "Tokens: 1k" not in text


def test_a_tool_call_and_its_result_stay_a_pair_in_every_tool_using_format(tmp_path: Path) -> None:
    for name in SAMPLES:
        if name in ("aider-chat-history-md", "mini-swe-agent-traj"):
            continue  # agents that act in their text: no tool calls
        turns = parse([m for m in FORMATS[name](SAMPLES[name](tmp_path)) if m["role"]
                       not in (SESSION, SUMMARY)]).turns  # fmt: skip
        calls = [c.id for t in turns for c in t.calls]
        answered = [r.call_id for t in turns for r in t.results]
        assert calls and calls == answered, name


def test_a_cline_request_answering_several_calls_is_split_at_its_result_headers() -> None:
    first, second = "[list_files for '0'] Result:\na.py\n\n", "[list_files for '1'] Result:\nb.py"
    messages = check(FORMATS["cline-ui-messages-json"](cline(first, second)))
    results = [m["content"] for m in messages if m["role"] == "tool"]
    assert results == [first.rstrip(), second]


def test_a_window_is_the_whole_conversation_the_part_before_its_summary_or_one_session() -> None:
    messages: list[Msg] = [
        {"role": SESSION, "content": "one"},
        {"role": "user", "content": "a"},
        {"role": SUMMARY, "content": "S"},
        {"role": "user", "content": "b"},
        {"role": SESSION, "content": "two"},
        {"role": "user", "content": "c"},
    ]
    assert window(messages, "session two") == ([{"role": "user", "content": "c"}], None)
    with pytest.raises(ValueError, match="several sessions"):
        window(messages, "whole")
    first = messages[1:4]
    assert window(first, "before-first-summary") == ([first[0]], "S")
    with pytest.raises(ValueError, match="cannot hold a compact summary"):
        window(first, "whole")
