"""Reading the three wire formats: which tool results are candidates, their calls, the query."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tersify.settings import Settings
from tersify.worker.gateway.formats import Api, RequestView, read
from tersify.worker.gateway.replacement import reads_output
from tersify.worker.gateway.sessions import client_of, session_of
from tersify.worker.gateway.spans import splice

LONG = "line of output\n" * 400


def anthropic(*messages: dict[str, Any]) -> RequestView:
    return read(
        Api.ANTHROPIC, json.dumps({"model": "m", "max_tokens": 5, "messages": list(messages)})
    )


def test_anthropic_text_results_are_found_with_their_calls_and_others_are_not() -> None:
    found = anthropic(
        {"role": "user", "content": "fix the build"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "Bash", "input": {"command": "make"}},
                {"type": "tool_use", "id": "b", "name": "Read", "input": {"file_path": "/x"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": LONG},
                {
                    "type": "tool_result",
                    "tool_use_id": "b",
                    "content": [{"type": "text", "text": LONG}],
                },
                {"type": "tool_result", "tool_use_id": "c", "content": LONG, "is_error": True},
                {
                    "type": "tool_result",
                    "tool_use_id": "d",
                    "content": [{"type": "image", "source": {}}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "e",
                    "content": [{"type": "text", "text": "x"}, {"type": "document", "source": {}}],
                },
                {"type": "tool_result", "tool_use_id": "f"},
                {"type": "text", "text": "<system-reminder>ignore</system-reminder>and why?"},
            ],
        },
    )
    assert [(r.call_id, r.call.name if r.call else None) for r in found.results] == [
        ("a", "Bash"),
        ("b", "Read"),
    ]
    assert found.results[0].call.input == {"command": "make"}  # type: ignore[union-attr]
    assert found.results[0].call.command == "make"  # type: ignore[union-attr]
    assert found.query == "and why?"
    assert found.opening == "fix the build"


def test_a_replacement_keeps_the_shape_and_the_last_parts_cache_control() -> None:
    content = [
        {"type": "text", "text": LONG},
        {"type": "text", "text": "tail", "cache_control": {"type": "ephemeral"}},
    ]
    found = anthropic(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "a", "content": content}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": LONG}]},
    )
    blocks, plain = found.results
    assert blocks.text == LONG + "\ntail"
    assert json.loads(blocks.render("S")) == [
        {"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}
    ]
    assert json.loads(plain.render("S")) == "S"


def test_openai_chat_tool_messages_find_their_calls_and_the_last_user_turn() -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "shell", "arguments": '{"command": ["ls", "-R"]}'},
    }
    body = {
        "model": "gpt",
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": LONG}]},
            {"role": "user", "content": [{"type": "text", "text": "second"}]},
        ],
    }
    found = read(Api.OPENAI_CHAT, json.dumps(body))
    (result,) = found.results
    assert result.call is not None and result.call.input == {"command": ["ls", "-R"]}
    assert result.call.command == "ls -R"
    assert (found.query, found.opening, found.model) == ("second", "first", "gpt")


def test_responses_outputs_find_their_function_calls() -> None:
    body = {
        "model": "gpt",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "go"}]},
            {"type": "function_call", "call_id": "k", "name": "shell", "arguments": "not json"},
            {"type": "function_call_output", "call_id": "k", "output": LONG},
            {
                "type": "function_call_output",
                "call_id": "z",
                "output": [{"type": "input_image", "image_url": "x"}],
            },
        ],
    }
    found = read(Api.OPENAI_RESPONSES, json.dumps(body))
    (result,) = found.results
    assert result.call is not None and (result.call.name, result.call.command) == (
        "shell",
        "not json",
    )
    assert found.query == "go"
    assert read(Api.OPENAI_RESPONSES, '{"model": "m", "input": "hello"}').query == "hello"


def test_only_a_command_that_reads_an_output_back_counts_as_one() -> None:
    assert reads_output("tersify output 0123abcd --grep FAILED | head")
    assert reads_output("cd /x && python -m tersify.worker.cli output abc --offset 200")
    assert not reads_output("tersify submit big.log")
    assert not reads_output("cat output.txt")
    assert not reads_output(None)


def test_a_session_comes_from_a_header_else_from_the_opening_turn() -> None:
    names = Settings(
        gateway_session_headers=" X-Tersify-Session , x-claude-code-session-id"
    ).gateway_session_headers
    convo = anthropic({"role": "user", "content": "fix the build"})
    later = anthropic(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "fix the build", "cache_control": {"type": "ephemeral"}}
            ],
        },
        {"role": "user", "content": "more"},
    )
    me = client_of({"x-api-key": "k1"}, "127.0.0.1")
    assert session_of({"x-claude-code-session-id": "abc-1"}, names, convo, me) == "abc-1"
    assert session_of({"x-tersify-session": "bad id!"}, names, convo, me).startswith("gw-")
    assert session_of({}, names, convo, me) == session_of({}, names, later, me)
    assert session_of({}, names, convo, me) != session_of(
        {}, names, anthropic({"role": "user", "content": "other"}), me
    )


def test_a_derived_session_is_the_clients_own() -> None:
    names = ("x-tersify-session",)
    convo = anthropic({"role": "user", "content": "fix the build"})
    keyed = [client_of({"x-api-key": k}, "127.0.0.1") for k in ("k1", "k2")]
    bearer = client_of({"authorization": "Bearer k1"}, "127.0.0.1")
    by_address = [client_of({}, a) for a in ("127.0.0.1", "127.0.0.2")]
    ids = {session_of({}, names, convo, c) for c in [*keyed, bearer, *by_address]}
    assert len(ids) == 5
    assert client_of({"x-api-key": "k1"}, "10.0.0.9") == keyed[0]  # the key, wherever it runs
    assert "k1" not in keyed[0]


texts = st.text(min_size=1, max_size=60)
ephemeral = st.just({"type": "ephemeral"})
part = st.fixed_dictionaries(
    {"type": st.just("text"), "text": texts}, optional={"cache_control": ephemeral}
)
parts = st.lists(part, min_size=1, max_size=3)
results = st.fixed_dictionaries(
    {"type": st.just("tool_result"), "tool_use_id": texts, "content": texts | parts},
    optional={"is_error": st.booleans(), "cache_control": ephemeral},
)
blocks = results | st.fixed_dictionaries({"type": st.just("text"), "text": texts})
turns = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant"]),
            "content": texts | st.lists(blocks, max_size=4),
        }
    ),
    min_size=1,
    max_size=6,
)


@given(
    turns, st.text(max_size=40), st.sampled_from([{}, {"indent": 1}, {"separators": (",", ":")}])
)
def test_rewriting_every_result_changes_only_their_contents_in_any_conversation(
    messages: list[dict[str, Any]], new: str, style: dict[str, Any]
) -> None:
    body = {"model": "m", "max_tokens": 5, "messages": messages, "tools": [{"name": "t"}]}
    text = json.dumps(body, **style)
    found = read(Api.ANTHROPIC, text)
    rewritten = json.loads(splice(text, [(r.start, r.end, r.render(new)) for r in found.results]))
    expected = json.loads(text)
    for message in expected["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") != "tool_result" or block.get("is_error") is True:
                continue
            if isinstance(block["content"], str):
                block["content"] = new
            else:
                extra = {k: v for k, v in block["content"][-1].items() if k == "cache_control"}
                block["content"] = [{"type": "text", "text": new, **extra}]
    assert rewritten == expected
    assert len(found.results) == sum(
        1
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result" and b.get("is_error") is not True
    )
