"""The fake model's streams, tool calls, token counts and Responses API, read by the SDKs."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai

from tests.fakemodel import SUMMARY_PREFIX, FakeModelServer, ok, tool_call

LOG = "ERROR disk full on /var\n" * 30
ASK = f"What failed?\n<tool_output>\n{LOG}</tool_output>"
EXPECTED = SUMMARY_PREFIX + LOG.strip()[:200]


def test_a_streamed_anthropic_answer_is_assembled_by_the_sdk(
    fake_model: FakeModelServer, claude: anthropic.Anthropic
) -> None:
    with claude.messages.stream(
        model="m", max_tokens=100, messages=[{"role": "user", "content": ASK}]
    ) as stream:
        deltas = list(stream.text_stream)
        final = stream.get_final_message()
    assert len(deltas) > 3
    assert "".join(deltas) == EXPECTED
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens > 0
    assert fake_model.requests[-1].body["stream"] is True


def test_a_scripted_tool_call_streams_to_the_anthropic_sdk(
    fake_model: FakeModelServer, claude: anthropic.Anthropic
) -> None:
    fake_model.script([tool_call("Bash", {"command": "cat big.log"}, text="Let me look.")])
    with claude.messages.stream(
        model="m", max_tokens=100, messages=[{"role": "user", "content": "go"}]
    ) as stream:
        final = stream.get_final_message()
    text, call = final.content
    assert text.type == "text" and text.text == "Let me look."
    assert call.type == "tool_use"
    assert (call.name, call.input) == ("Bash", {"command": "cat big.log"})
    assert call.id.startswith("toolu_")
    assert final.stop_reason == "tool_use"


def test_a_streamed_openai_answer_and_tool_call_are_assembled_by_the_sdk(
    fake_model: FakeModelServer, gpt: openai.OpenAI
) -> None:
    fake_model.script([ok(), tool_call("shell", {"command": ["bash", "-lc", "ls -R /"]})])
    chunks = list(
        gpt.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": ASK}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == EXPECTED
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    with gpt.chat.completions.stream(
        model="m", messages=[{"role": "user", "content": "go"}]
    ) as stream:
        final = stream.get_final_completion()
    (call,) = final.choices[0].message.tool_calls or []
    assert call.function.name == "shell"
    assert json.loads(call.function.arguments) == {"command": ["bash", "-lc", "ls -R /"]}
    assert final.choices[0].finish_reason == "tool_calls"


def test_a_tool_call_without_streaming_parses_in_both_sdks(
    fake_model: FakeModelServer, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    fake_model.script([tool_call("Read", {"file_path": "/x"}), tool_call("read", {"path": "/x"})])
    message = claude.messages.create(
        model="m", max_tokens=10, messages=[{"role": "user", "content": "go"}]
    )
    completion = gpt.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "go"}]
    )
    assert message.content[0].type == "tool_use" and message.content[0].input == {"file_path": "/x"}
    (call,) = completion.choices[0].message.tool_calls or []
    assert call.type == "function" and call.function.name == "read"


def test_the_anthropic_sdk_counts_tokens_at_the_fake(claude: anthropic.Anthropic) -> None:
    counted = claude.messages.count_tokens(model="m", messages=[{"role": "user", "content": ASK}])
    assert counted.input_tokens > len(LOG) // 5


def test_the_responses_api_answers_text_and_function_calls(
    fake_model: FakeModelServer, gpt: openai.OpenAI
) -> None:
    fake_model.script([ok("fine"), tool_call("shell", {"command": ["ls"]})])
    first = gpt.responses.create(model="m", input="hello")
    second = gpt.responses.create(
        model="m", input=[{"role": "user", "content": [{"type": "input_text", "text": "go"}]}]
    )
    assert first.output_text == "fine"
    (item,) = second.output
    assert item.type == "function_call"
    assert (item.name, json.loads(item.arguments)) == ("shell", {"command": ["ls"]})
    assert fake_model.requests[-1].path == "/v1/responses"


def test_recorded_requests_keep_the_raw_body_and_the_query_string(
    fake_model: FakeModelServer,
) -> None:
    raw = b'{"model": "m", "max_tokens": 10,\n "messages": [{"role": "user", '
    raw += b'"content": "h\\u00e9llo"}]}'
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    with httpx.Client(base_url=fake_model.url) as client:
        assert client.post("/v1/messages?beta=true", content=raw, headers=headers).is_success
    recorded = fake_model.requests[-1]
    assert recorded.raw == raw
    assert recorded.body["messages"][0]["content"] == "héllo"
    assert recorded.target == "/v1/messages?beta=true"
    assert recorded.path == "/v1/messages"
