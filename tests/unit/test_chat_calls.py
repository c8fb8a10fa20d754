"""One conversation model: a tool call reads the same whichever way it arrived."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.chat import ToolCall, command_of, parse, shell_command
from tersify.chat.calls import decoded, item_call
from tersify.worker.gateway.formats import Api, read
from tersify.worker.savings.reader import read_logs

LONG = "output line\n" * 300
# Arguments of one call: a shell command under any of the fields agents use, or none at all.
ARGUMENTS = st.one_of(
    st.fixed_dictionaries({"command": st.text(min_size=1, max_size=40)}),
    st.fixed_dictionaries({"cmd": st.lists(st.text(min_size=1, max_size=10), min_size=1)}),
    st.fixed_dictionaries(
        {"command": st.text(min_size=1, max_size=40).map(lambda c: ["bash", "-lc", c])}
    ),
    st.fixed_dictionaries({"file_path": st.text(max_size=30), "limit": st.integers(0, 99)}),
    st.fixed_dictionaries({"script": st.text(min_size=1, max_size=40), "timeout": st.just(5)}),
)


def paths(arguments: dict[str, Any], tmp: Path) -> dict[str, str | None]:
    """The command each arrival path reads for one call with ``arguments``."""
    text = json.dumps(arguments)
    anthropic = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "tool", "input": arguments}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": LONG}],
        },
    ]
    function = {"name": "tool", "arguments": text}
    chat = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "t1", "function": function}]},
        {"role": "tool", "tool_call_id": "t1", "content": LONG},
    ]
    item = {"type": "function_call", "call_id": "t1", "name": "tool", "arguments": text}
    responses = [item, {"type": "function_call_output", "call_id": "t1", "output": LONG}]
    claude_log = tmp / "claude.jsonl"
    claude_log.write_text(
        "".join(
            json.dumps({"type": m["role"], "sessionId": "s", "message": {**m, "id": f"m{i}"}})
            + "\n"
            for i, m in enumerate(anthropic)
        )
    )
    codex_log = tmp / "rollout.jsonl"
    codex_log.write_text(
        "".join(json.dumps({"type": "response_item", "payload": p}) + "\n" for p in responses)
    )

    def gateway(api: Api, body: dict[str, Any]) -> str | None:
        (result,) = read(api, json.dumps({"model": "m", **body})).results
        return result.call.command if result.call else "no call"

    def logged(path: Path) -> str | None:
        (transcript,) = read_logs([path]).transcripts
        return transcript.outputs[0].command

    call = item_call(item)
    return {
        "anthropic tool_use": parse(anthropic).turns[1].calls[0].command,
        "openai tool_calls": parse(chat).turns[1].calls[0].command,
        "responses item": call.command if call else "no call",
        "mcp arguments": command_of(arguments),
        "gateway anthropic": gateway(Api.ANTHROPIC, {"messages": anthropic}),
        "gateway chat": gateway(Api.OPENAI_CHAT, {"messages": chat}),
        "gateway responses": gateway(Api.OPENAI_RESPONSES, {"input": responses}),
        "claude code log": logged(claude_log),
        "codex log": logged(codex_log),
    }


@settings(max_examples=40, deadline=None)
@given(ARGUMENTS)
def test_a_call_gives_the_same_command_on_every_arrival_path(arguments: dict[str, Any]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = paths(arguments, Path(tmp))
    assert len(set(found.values())) == 1, found
    assert next(iter(found.values())) == command_of(json.dumps(arguments))


def test_the_command_is_the_shell_command_else_the_arguments_as_one_json_line() -> None:
    assert command_of({"command": "pytest -q", "timeout": 60}) == "pytest -q"
    assert command_of({"cmd": ["bash", "-lc", "rg -n x src"]}) == "rg -n x src"
    assert command_of({"command": ["/bin/sh", "-c", "ls"]}) == "ls"
    assert command_of({"command": ["git", "commit", "-m", "a b"]}) == "git commit -m 'a b'"
    assert command_of({"commands": ["npm ci", "npm test"]}) == "npm ci\nnpm test"
    assert command_of({"b": 1, "a": "x"}) == '{"a": "x", "b": 1}'
    assert command_of('{"path": "é"}') == '{"path": "é"}'
    assert command_of("*** Begin Patch\n*** Update File: a.py") == (
        "*** Begin Patch\n*** Update File: a.py"
    )
    assert command_of(None) is command_of({}) is command_of("") is command_of("  ") is None
    assert len(command_of({"command": "x" * 200_000}) or "") == 100_000


def test_only_a_shell_command_field_is_a_shell_command() -> None:
    assert shell_command('{"command": "make"}') == "make"
    assert shell_command({"script": "echo hi"}) == "echo hi"
    assert shell_command({"file_path": "a.py", "content": "x"}) is None
    assert shell_command("make test") is None  # free-form text: not known to be a shell line
    assert shell_command({"command": ""}) is None


def test_arguments_decode_to_an_object_whatever_their_form() -> None:
    assert decoded('{"a": 1}') == {"a": 1} == ToolCall.of("i", "t", {"a": 1}).input
    assert decoded("not json") == {"input": "not json"}
    assert decoded("[1, 2]") == {"input": [1, 2]}
    assert decoded("") == decoded(None) == {}


def test_responses_items_are_calls_and_a_local_shell_action_runs_its_command() -> None:
    shell = {"type": "exec", "command": ["bash", "-lc", "cargo test"], "timeout_ms": 1000}
    local = item_call({"type": "local_shell_call", "call_id": "c", "action": shell})
    assert local is not None and (local.name, local.command) == ("local_shell", "cargo test")
    custom = item_call({"type": "custom_tool_call", "call_id": "p", "input": "*** Begin Patch"})
    assert custom is not None and (custom.name, custom.command) == ("", "*** Begin Patch")
    assert item_call({"type": "function_call", "name": "x", "arguments": "{}"}) is None
    assert item_call({"type": "message", "call_id": "c"}) is None
