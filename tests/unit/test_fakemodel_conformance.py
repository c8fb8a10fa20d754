"""The fake model server, driven by the official SDK clients so it cannot drift from the APIs."""

from __future__ import annotations

import json
import threading
from typing import Any

import anthropic
import httpx
import openai
import pytest
from pydantic import BaseModel, SecretStr

from tersify.contract import ToolType
from tersify.worker.model.providers import AnthropicProvider, ModelRequest, OpenAIProvider
from tersify.worker.summarize.answers import answer_shape
from tests.fakemodel import (
    SUMMARY_PREFIX,
    Behaviour,
    FakeModelServer,
    answer,
    close_mid_body,
    empty,
    hang,
    malformed,
    ok,
    status,
    verbatim,
)

TOOL_OUTPUT = "FAILED tests/test_app.py::test_login - AssertionError: 401 != 200\n" * 40
USER = f"Summarize this pytest output.\n<tool_output>\n{TOOL_OUTPUT}</tool_output>"


def ask_claude(client: anthropic.Anthropic, timeout: float = 5.0) -> anthropic.types.Message:
    return client.messages.create(
        model="claude-haiku-4-5-20251001",
        max_tokens=200,
        system="You summarize tool output.",
        messages=[{"role": "user", "content": USER}],
        timeout=timeout,
    )


def ask_gpt(client: openai.OpenAI, timeout: float = 5.0) -> openai.types.chat.ChatCompletion:
    return client.chat.completions.create(
        model="gpt-4.1-mini",
        max_tokens=200,
        messages=[
            {"role": "system", "content": "You summarize tool output."},
            {"role": "user", "content": USER},
        ],
        timeout=timeout,
    )


def test_the_anthropic_sdk_parses_a_summary_with_usage(
    fake_model: FakeModelServer, claude: anthropic.Anthropic
) -> None:
    message = ask_claude(claude)
    assert message.content[0].type == "text"
    assert message.content[0].text == SUMMARY_PREFIX + TOOL_OUTPUT.strip()[:200]
    assert message.model == "claude-haiku-4-5-20251001"
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens > message.usage.output_tokens > 0
    assert fake_model.requests[-1].path == "/v1/messages"


def test_the_openai_sdk_parses_a_summary_with_usage(
    fake_model: FakeModelServer, gpt: openai.OpenAI
) -> None:
    completion = ask_gpt(gpt)
    assert completion.choices[0].message.content == SUMMARY_PREFIX + TOOL_OUTPUT.strip()[:200]
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens > completion.usage.completion_tokens > 0
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert fake_model.requests[-1].path == "/v1/chat/completions"


def test_a_scripted_text_reaches_both_sdks(
    fake_model: FakeModelServer, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    fake_model.script([ok("first"), ok("second")])
    assert ask_claude(claude).content[0].text == "first"  # type: ignore[union-attr]
    assert ask_gpt(gpt).choices[0].message.content == "second"


def test_an_empty_answer_parses_as_empty_text(
    fake_model: FakeModelServer, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    fake_model.set_default(empty())
    assert ask_claude(claude).content[0].text == ""  # type: ignore[union-attr]
    assert ask_gpt(gpt).choices[0].message.content == ""


# A status, then the Anthropic SDK's exception and error type for it, then the OpenAI SDK's.
ERRORS = [
    (429, anthropic.RateLimitError, "rate_limit_error", openai.RateLimitError, "requests"),
    (500, anthropic.InternalServerError, "api_error", openai.InternalServerError, "server_error"),
    (529, anthropic.InternalServerError, "overloaded_error",
     openai.InternalServerError, "server_error"),
    (400, anthropic.BadRequestError, "invalid_request_error",
     openai.BadRequestError, "invalid_request_error"),
    (401, anthropic.AuthenticationError, "authentication_error",
     openai.AuthenticationError, "invalid_request_error"),
]  # fmt: skip


@pytest.mark.parametrize(("code", "claude_raises", "claude_type", "gpt_raises", "gpt_type"), ERRORS)
def test_each_error_status_raises_each_sdks_matching_exception(
    fake_model: FakeModelServer,
    claude: anthropic.Anthropic,
    gpt: openai.OpenAI,
    code: int,
    claude_raises: type[anthropic.APIStatusError],
    claude_type: str,
    gpt_raises: type[openai.APIStatusError],
    gpt_type: str,
) -> None:
    fake_model.set_default(status(code))
    with pytest.raises(claude_raises) as from_claude:
        ask_claude(claude)
    with pytest.raises(gpt_raises) as from_gpt:
        ask_gpt(gpt)
    assert from_claude.value.status_code == from_gpt.value.status_code == code
    message = from_claude.value.body["error"]["message"]  # type: ignore[index]
    assert from_claude.value.body == {
        "type": "error",
        "error": {"type": claude_type, "message": message},
    }
    assert (from_gpt.value.type, from_gpt.value.param) == (gpt_type, None)
    assert from_claude.value.request_id is not None and from_gpt.value.request_id is not None


def test_a_429_with_retry_after_sends_the_header_both_sdks_see(
    fake_model: FakeModelServer, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    fake_model.set_default(status(429, retry_after=7))
    with pytest.raises(anthropic.RateLimitError) as from_claude:
        ask_claude(claude)
    with pytest.raises(openai.RateLimitError) as from_gpt:
        ask_gpt(gpt)
    assert from_claude.value.response.headers["retry-after"] == "7"
    assert from_gpt.value.response.headers["retry-after"] == "7"
    assert from_gpt.value.code == "rate_limit_exceeded"


@pytest.mark.parametrize(
    ("behaviour", "claude_raises", "gpt_raises", "timeout"),
    [
        (malformed(), json.JSONDecodeError, json.JSONDecodeError, 5.0),
        (close_mid_body(), anthropic.APIConnectionError, openai.APIConnectionError, 5.0),
        (hang(), anthropic.APITimeoutError, openai.APITimeoutError, 0.2),
    ],
    ids=["a-malformed-body", "a-body-cut-short-is-a-connection-error", "a-hang-times-out"],
)
def test_a_broken_answer_raises_what_each_sdk_raises_for_it(
    fake_model: FakeModelServer,
    claude: anthropic.Anthropic,
    gpt: openai.OpenAI,
    behaviour: Behaviour,
    claude_raises: type[Exception],
    gpt_raises: type[Exception],
    timeout: float,
) -> None:
    fake_model.set_default(behaviour)
    with pytest.raises(claude_raises):
        ask_claude(claude, timeout=timeout)
    with pytest.raises(gpt_raises):
        ask_gpt(gpt, timeout=timeout)


def test_an_unknown_path_is_not_found_in_each_apis_error_shape(
    fake_model: FakeModelServer,
) -> None:
    with (
        anthropic.Anthropic(base_url=fake_model.url + "/nowhere", api_key="k", max_retries=0) as c1,
        openai.OpenAI(base_url=fake_model.url + "/nowhere", api_key="k", max_retries=0) as c2,
    ):
        with pytest.raises(anthropic.NotFoundError) as from_claude:
            ask_claude(c1)
        with pytest.raises(openai.NotFoundError) as from_gpt:
            ask_gpt(c2)
    assert from_claude.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]
    assert from_gpt.value.type == "invalid_request_error"


def test_the_openai_sdk_lists_the_fake_model(gpt: openai.OpenAI) -> None:
    assert [model.id for model in gpt.models.list()] == ["fake-model"]


def test_the_sdks_and_our_providers_send_the_key_and_version_headers(
    fake_model: FakeModelServer, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    request = ModelRequest(system="You summarize tool output.", user=USER, max_tokens=200)
    key = SecretStr("test-key")
    options = {"connect_timeout": 1.0, "pool_size": 1}
    ours_anthropic = AnthropicProvider(key, fake_model.url, "m", **options)
    ours_openai = OpenAIProvider(key, fake_model.openai_base_url, "m", **options)
    try:
        ask_claude(claude)
        ours_anthropic.complete(request, timeout=5.0)
        ask_gpt(gpt)
        ours_openai.complete(request, timeout=5.0)
    finally:
        ours_anthropic.close()
        ours_openai.close()
    sdk_claude, our_claude, sdk_gpt, our_gpt = (r.headers for r in fake_model.requests)
    # anthropic 2.x sends the key as a bearer token, 0.x as x-api-key; the API takes either.
    assert "test-key" in (sdk_claude.get("x-api-key"), sdk_claude.get("authorization", "")[7:])
    assert our_claude["x-api-key"] == "test-key"
    assert sdk_claude["anthropic-version"]
    assert our_claude["anthropic-version"] == "2023-06-01"
    assert sdk_claude["content-type"] == our_claude["content-type"] == "application/json"
    assert sdk_gpt["authorization"] == our_gpt["authorization"] == "Bearer test-key"
    assert sdk_gpt["content-type"] == our_gpt["content-type"] == "application/json"


def test_the_fake_rejects_a_body_the_real_api_would_reject(fake_model: FakeModelServer) -> None:
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    with httpx.Client(base_url=fake_model.url) as client:
        no_max_tokens = client.post(
            "/v1/messages", json={"model": "m", "messages": []}, headers=headers
        )
        no_key = client.post("/v1/messages", json={}, headers={"anthropic-version": "2023-06-01"})
    assert no_max_tokens.status_code == 400
    assert no_max_tokens.json()["error"]["type"] == "invalid_request_error"
    assert no_max_tokens.headers["request-id"].startswith("req_")
    assert no_key.status_code == 401
    assert no_key.json()["error"]["type"] == "authentication_error"


def post_message(client: httpx.Client, text: str) -> str:
    response = client.post(
        "/v1/messages",
        headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
        json={"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": text}]},
    )
    if response.status_code != 200:
        return str(response.status_code)
    return str(response.json()["content"][0]["text"])


def test_the_script_comes_first_then_the_first_matching_rule_then_the_default(
    fake_model: FakeModelServer,
) -> None:
    fake_model.set_default(ok("default"))
    fake_model.add_rule("FAKE-FAULT-429", status(429))
    fake_model.add_rule("FAKE", ok("second rule"))
    fake_model.script([ok("scripted")])
    with httpx.Client(base_url=fake_model.url) as client:
        answers = [post_message(client, f"x {marker} y") for marker in ("FAKE-FAULT-429",) * 2]
        answers += [post_message(client, "FAKE-OTHER"), post_message(client, "plain")]
        fake_model.reset()
        answers.append(post_message(client, "FAKE-FAULT-429"))
    assert answers == [
        "scripted",
        "429",
        "second rule",
        "default",
        SUMMARY_PREFIX + "FAKE-FAULT-429",
    ]


def test_each_scripted_behaviour_is_consumed_once_under_concurrency(
    fake_model: FakeModelServer,
) -> None:
    fake_model.script(ok(str(n)) for n in range(200))
    answers: list[str] = []
    lock = threading.Lock()

    def send_many() -> None:
        with httpx.Client(base_url=fake_model.url) as client:
            for _ in range(20):
                answer = post_message(client, "hello")
                with lock:
                    answers.append(answer)

    threads = [threading.Thread(target=send_many) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20.0)
    assert sorted(answers, key=int) == [str(n) for n in range(200)]
    assert fake_model.request_count == 200


def test_recorded_requests_are_bounded_but_all_are_counted() -> None:
    with FakeModelServer(max_recorded=3) as fake, httpx.Client(base_url=fake.url) as client:
        for n in range(5):
            post_message(client, f"request {n}")
        assert fake.request_count == 5
        recorded = fake.requests
    assert [r.body["messages"][0]["content"] for r in recorded] == [
        "request 2",
        "request 3",
        "request 4",
    ]
    assert recorded[0].headers["anthropic-version"] == "2023-06-01"


# structured answers: a forced tool call (Messages), a JSON schema response format (Chat)


class QuoteRange(BaseModel):
    start: int
    end: int


class Summary(BaseModel):
    summary: str
    quotes: list[QuoteRange]
    needs_full_output: bool


TOOL = {
    "name": "tool_output_summary",
    "description": "The summary of the tool output and the line ranges to quote from it.",
    "input_schema": {
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "quotes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
                    "required": ["start", "end"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["summary", "quotes"],
        "additionalProperties": False,
    },
}
FORCED = {"type": "tool", "name": "tool_output_summary"}


def ask_claude_for_a_tool(
    client: anthropic.Anthropic, messages: list[Any] | None = None, **extra: Any
) -> anthropic.types.Message:
    return client.messages.create(
        model="claude-haiku-4-5-20251001",
        max_tokens=200,
        system="You summarize tool output.",
        messages=messages or [{"role": "user", "content": USER}],
        timeout=5.0,
        **({"tools": [TOOL], "tool_choice": FORCED} | extra),
    )


def test_the_anthropic_sdk_gets_the_forced_tool_call_and_can_answer_it(
    fake_model: FakeModelServer, claude: anthropic.Anthropic
) -> None:
    message = ask_claude_for_a_tool(claude)
    (call,) = message.content
    assert call.type == "tool_use" and call.name == "tool_output_summary"
    assert call.input == {"summary": SUMMARY_PREFIX + TOOL_OUTPUT.strip()[:200], "quotes": []}
    assert message.stop_reason == "tool_use" and call.id.startswith("toolu_")
    refused = {"type": "tool_result", "tool_use_id": call.id, "is_error": True, "content": "no"}
    again = ask_claude_for_a_tool(
        claude,
        [
            {"role": "user", "content": USER},
            {"role": "assistant", "content": message.content},
            {"role": "user", "content": [refused]},
        ],
    )
    assert again.content[0].type == "tool_use"
    assert fake_model.requests[-1].body["messages"][1]["content"][0]["id"] == call.id


def test_a_scripted_structured_answer_reaches_both_sdks_as_given(
    fake_model: FakeModelServer, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    given = {"summary": "1 test fails.", "quotes": [{"start": 3, "end": 4}]}
    full = given | {"needs_full_output": True}
    fake_model.script([answer(given), answer(full)])
    assert ask_claude_for_a_tool(claude).content[0].input == given  # type: ignore[union-attr]
    parsed = gpt.chat.completions.parse(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": USER}], response_format=Summary
    )
    assert parsed.choices[0].message.parsed == Summary.model_validate(full)


def test_the_openai_sdk_parses_the_default_answer_into_its_schema(
    fake_model: FakeModelServer, gpt: openai.OpenAI
) -> None:
    completion = gpt.chat.completions.parse(
        model="gpt-4.1-mini",
        messages=[{"role": "system", "content": "Summarize."}, {"role": "user", "content": USER}],
        response_format=Summary,
    )
    parsed = completion.choices[0].message.parsed
    assert parsed == Summary(
        summary=SUMMARY_PREFIX + TOOL_OUTPUT.strip()[:200], quotes=[], needs_full_output=False
    )
    sent = fake_model.requests[-1].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True


def test_a_verbatim_answer_ignores_the_format_asked_for(
    fake_model: FakeModelServer, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    fake_model.set_default(verbatim("not JSON at all"))
    message = ask_claude_for_a_tool(claude)
    assert message.content[0].type == "text" and message.content[0].text == "not JSON at all"
    completion = gpt.chat.completions.create(
        model="gpt-4.1-mini",
        messages=[{"role": "user", "content": USER}],
        response_format=strict(TOOL["input_schema"]),  # type: ignore[arg-type]
    )
    assert completion.choices[0].message.content == "not JSON at all"


BAD_TOOL_REQUESTS = {
    "a choice naming no tool": {"tool_choice": {"type": "tool", "name": "other"}},
    "a choice without tools": {"tools": anthropic.omit, "tool_choice": FORCED},
    "a tool name with a dot": {
        "tools": [TOOL | {"name": "tool.summary"}],
        "tool_choice": {"type": "any"},
    },
    "a tool without a schema": {
        "tools": [{"name": "t", "description": "d"}],
        "tool_choice": {"type": "auto"},
    },
    "a call left unanswered": {
        "messages": [
            {"role": "user", "content": USER},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}],
            },
            {"role": "user", "content": "go on"},
        ]
    },
    "a result answering no call": {
        "messages": [
            {"role": "user", "content": USER},
            {"role": "assistant", "content": "fine"},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}],
            },
        ]
    },
    "an empty assistant turn": {
        "messages": [
            {"role": "user", "content": USER},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "go on"},
        ]
    },
}


@pytest.mark.parametrize("extra", BAD_TOOL_REQUESTS.values(), ids=BAD_TOOL_REQUESTS.keys())
def test_the_fake_refuses_the_tool_requests_the_messages_api_refuses(
    claude: anthropic.Anthropic, extra: dict[str, Any]
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask_claude_for_a_tool(claude, extra.pop("messages", None), **extra)
    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]


def strict(schema: dict[str, Any], name: str = "summary") -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


BAD_FORMATS = {
    "an open object": strict({"type": "object", "properties": {"a": {"type": "string"}},
                              "required": ["a"]}),
    "an optional property": strict({"type": "object", "properties": {"a": {"type": "string"}},
                                    "required": [], "additionalProperties": False}),
    "an open nested object": strict(TOOL["input_schema"] | {"properties": {"q": {
        "type": "array", "items": {"type": "object", "properties": {}}}}, "required": ["q"]}),
    "a root array": strict({"type": "array", "items": {"type": "string"}}),
    "a bad name": strict(TOOL["input_schema"], name="tool output"),  # type: ignore[arg-type]
    "json_object without the word": {"type": "json_object"},
    "an unknown type": {"type": "yaml"},
}  # fmt: skip


@pytest.mark.parametrize("fmt", BAD_FORMATS.values(), ids=BAD_FORMATS.keys())
def test_the_fake_refuses_the_response_formats_chat_completions_refuses(
    gpt: openai.OpenAI, fmt: dict[str, Any]
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        gpt.chat.completions.create(
            model="gpt-4.1-mini",
            messages=[{"role": "user", "content": "Summarize this."}],
            response_format=fmt,  # type: ignore[arg-type]
        )
    assert caught.value.type == "invalid_request_error"


def test_our_structured_requests_are_ones_the_sdks_send_and_parse_alike(
    fake_model: FakeModelServer, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    form = answer_shape(ToolType.COMMAND_OUTPUT).answer_format()
    request = ModelRequest(system="Summarize.", user=USER, max_tokens=200, answer_format=form)
    options = {"connect_timeout": 1.0, "pool_size": 1}
    ours_anthropic = AnthropicProvider(SecretStr("k"), fake_model.url, "m", **options)
    ours_openai = OpenAIProvider(SecretStr("k"), fake_model.openai_base_url, "m", **options)
    try:
        from_anthropic = ours_anthropic.complete(request, timeout=5.0)
        from_openai = ours_openai.complete(request, timeout=5.0)
    finally:
        ours_anthropic.close()
        ours_openai.close()
    our_claude, our_gpt = (r.body for r in fake_model.requests)
    sdk = ask_claude_for_a_tool(claude, tools=our_claude["tools"],
                                tool_choice=our_claude["tool_choice"])  # fmt: skip
    assert from_anthropic.data == sdk.content[0].input  # type: ignore[union-attr]
    assert from_anthropic.call_id is not None and from_anthropic.call_id.startswith("toolu_")
    parsed = gpt.chat.completions.create(
        model="m", messages=our_gpt["messages"], response_format=our_gpt["response_format"]
    )
    assert json.loads(from_openai.text) == json.loads(parsed.choices[0].message.content or "")
