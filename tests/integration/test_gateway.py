"""``tersify gateway`` before the fake model, driven by the official Anthropic and OpenAI SDKs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import anthropic
import httpx
import openai
import pytest
import redis

from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, ok
from tests.helpers import tersify, wait_for
from tests.integration.gateway import (
    API_KEY,
    BIG_LOG,
    Capture,
    Gateway,
    common_prefix,
    model_requests,
    replaced,
)

StartWorker = Callable[..., WorkerProcess]
StartGateway = Callable[..., Gateway]
MODEL = "claude-opus-5-5"
PRICES = "claude-opus-5-5=5.0/25.0,gpt-5=1.25/10"
LITERAL = json.dumps(BIG_LOG).encode()  # by prefix: claude-opus-5-5 is priced
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5Erk"


def anthropic_turn(log: str = BIG_LOG) -> list[dict[str, Any]]:
    """A user turn, a Bash call, and its results: one large, one small, an image, an error."""
    return [
        {"role": "user", "content": "Why does the build fail?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Running the tests."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "Bash",
                    "input": {"command": "pytest -v"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "Bash",
                    "input": {"command": "git status"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_3",
                    "name": "Read",
                    "input": {"file_path": "/a.png"},
                },
                {"type": "tool_use", "id": "toolu_4", "name": "Bash", "input": {"command": "make"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": log},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "nothing to commit"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_3",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                        }
                    ],
                },
                {"type": "tool_result", "tool_use_id": "toolu_4", "content": log, "is_error": True},
            ],
        },
    ]


@pytest.fixture
def gateway(start_worker: StartWorker, start_gateway: StartGateway) -> Gateway:
    """A gateway with a live worker behind it (summaries: the built-in extractive provider)."""
    start_worker()
    return start_gateway(model_prices=PRICES)


def assert_headers_passed(sent: dict[str, str], forwarded: dict[str, str]) -> None:
    """Every end-to-end header the client sent reached the provider unchanged, its key too."""
    own = {"host", "content-length", "connection"}
    assert {k: v for k, v in sent.items() if k not in own} == {
        k: v for k, v in forwarded.items() if k not in own
    }
    assert API_KEY in (sent.get("x-api-key"), sent.get("authorization", "")[7:])


def test_a_large_tool_result_arrives_shrunk_and_everything_else_byte_identical(
    settings: Settings,
    start_worker: StartWorker,
    start_gateway: StartGateway,
    fake_model: FakeModelServer,
) -> None:
    start_worker()
    gateway = start_gateway(model_prices=PRICES)
    capture = Capture()
    with anthropic.Anthropic(
        base_url=gateway.url, api_key=API_KEY, max_retries=0, http_client=capture.client()
    ) as client:
        answer = client.messages.with_raw_response.create(
            model=MODEL, max_tokens=300, messages=anthropic_turn()
        )
    message = answer.parse()
    assert message.content[0].type == "text"
    (forwarded,) = model_requests(fake_model)
    (sent,) = capture.bodies
    # only the first occurrence (toolu_1) is replaced: the error result keeps the same text
    summary = replaced(sent, forwarded.raw, json.dumps(BIG_LOG).encode())
    assert isinstance(summary, str) and len(summary) < len(BIG_LOG) / 4
    assert "tersify output " in summary and "--grep TEXT" in summary
    assert forwarded.raw.count(json.dumps(BIG_LOG).encode()) == 1  # the error result, whole
    assert_headers_passed(capture.headers[0], forwarded.headers)
    assert answer.headers["tersify-rewrites"] == "new=1, reused=0, fallback=0"
    before, after = (int(answer.headers[f"tersify-tokens-{k}"]) for k in ("before", "after"))
    assert after < before
    assert float(answer.headers["tersify-saved-usd"]) == pytest.approx((before - after) * 5e-6)


def claude(gateway: Gateway, capture: Capture, **headers: str) -> anthropic.Anthropic:
    """The Anthropic SDK pointed at the gateway, its request bodies captured."""
    return anthropic.Anthropic(
        base_url=gateway.url,
        api_key=API_KEY,
        max_retries=0,
        http_client=capture.client(),
        default_headers=headers,
    )


def test_a_second_turn_repeats_the_first_turns_prefix_byte_for_byte_while_streaming(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    capture = Capture()
    turn = anthropic_turn()
    answers = []
    with claude(gateway, capture) as client:
        for extra in (
            [],
            [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "And now?"}],
        ):
            with client.messages.with_streaming_response.create(
                model=MODEL, max_tokens=300, messages=turn + extra, stream=True
            ) as response:
                events = [line for line in response.iter_lines() if line.startswith("event: ")]
                answers.append((response.headers, events))
    first, second = (r.raw for r in model_requests(fake_model))
    sent_first, sent_second = capture.bodies
    shared = common_prefix(sent_first, sent_second)  # up to the end of the first turn's messages
    growth = len(first) - len(sent_first)  # the replacement's length against the original's
    assert growth < -len(BIG_LOG) / 2
    assert common_prefix(first, second) == shared + growth  # the forwarded prefix, kept whole
    assert replaced(sent_first, first, json.dumps(BIG_LOG).encode()) == replaced(
        sent_second, second, json.dumps(BIG_LOG).encode()
    )
    (first_headers, first_events), (second_headers, _) = answers
    assert first_events[0] == "event: message_start" and first_events[-1] == "event: message_stop"
    assert first_headers["tersify-rewrites"] == "new=1, reused=0, fallback=0"
    assert second_headers["tersify-rewrites"] == "new=0, reused=1, fallback=0"
    assert first_headers["tersify-session"] == second_headers["tersify-session"]  # derived, stable


def openai_messages(log: str = BIG_LOG) -> list[dict[str, Any]]:
    """A Chat Completions conversation: a shell call and its large result."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {
            "name": "shell",
            "arguments": json.dumps({"command": ["bash", "-lc", "pytest -v"]}),
        },
    }
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Why does the build fail?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": log},
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_chat_completions_get_the_summary_and_the_answer_streams_back(
    gateway: Gateway, fake_model: FakeModelServer, stream: bool
) -> None:
    capture = Capture()
    fake_model.script([ok("The build fails on test_case_0.")])
    with openai.OpenAI(
        base_url=gateway.openai_url, api_key=API_KEY, max_retries=0, http_client=capture.client()
    ) as client:
        if stream:
            chunks = client.chat.completions.create(
                model="gpt-5", messages=openai_messages(), stream=True
            )
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            completion = client.chat.completions.create(model="gpt-5", messages=openai_messages())
            text = completion.choices[0].message.content or ""
    assert text == "The build fails on test_case_0."
    (forwarded,) = model_requests(fake_model, "/v1/chat/completions")
    summary = replaced(capture.bodies[0], forwarded.raw, json.dumps(BIG_LOG).encode())
    assert "tersify output " in summary and len(summary) < len(BIG_LOG) / 4
    assert forwarded.headers["authorization"] == f"Bearer {API_KEY}"
    assert_headers_passed(capture.headers[0], forwarded.headers)


def test_a_responses_api_function_call_output_is_replaced(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    capture = Capture()
    items: list[Any] = [
        {"role": "user", "content": "Why does the build fail?"},
        {
            "type": "function_call",
            "call_id": "call_9",
            "name": "shell",
            "arguments": '{"command": ["pytest"]}',
        },
        {"type": "function_call_output", "call_id": "call_9", "output": BIG_LOG},
    ]
    with openai.OpenAI(
        base_url=gateway.openai_url, api_key=API_KEY, max_retries=0, http_client=capture.client()
    ) as client:
        response = client.responses.create(model="gpt-5", input=items)
    assert response.output_text.startswith("Summary: ")
    (forwarded,) = model_requests(fake_model, "/v1/responses")
    summary = replaced(capture.bodies[0], forwarded.raw, json.dumps(BIG_LOG).encode())
    assert "tersify output " in summary


def test_count_tokens_sees_the_shrunk_request(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    with (
        anthropic.Anthropic(base_url=fake_model.url, api_key=API_KEY, max_retries=0) as direct,
        claude(gateway, Capture()) as through,
    ):
        whole = direct.messages.count_tokens(model=MODEL, messages=anthropic_turn())
        shrunk = through.messages.count_tokens(model=MODEL, messages=anthropic_turn())
    assert shrunk.input_tokens < whole.input_tokens - len(BIG_LOG) // 8


def test_reading_an_output_back_is_never_shrunk_again(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    capture = Capture()
    turn = anthropic_turn()
    turn[1]["content"][2]["input"] = {  # toolu_2
        "command": "tersify output 0123456789abcdef0123456789abcdef --from 1 --limit 600"
    }
    turn[2]["content"][0] = {"type": "tool_result", "tool_use_id": "toolu_2", "content": BIG_LOG}
    turn[2]["content"][1] = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "short"}
    with claude(gateway, capture, **{"x-tersify-session": "agent-7"}) as client:
        answer = client.messages.with_raw_response.create(
            model=MODEL, max_tokens=300, messages=turn
        )
    (forwarded,) = model_requests(fake_model)
    assert forwarded.raw == capture.bodies[0]
    assert answer.headers["tersify-rewrites"] == "new=0, reused=0, fallback=0"
    assert answer.headers["tersify-session"] == "agent-7"


def test_a_text_block_result_keeps_its_cache_control_and_its_replacement_does_not_depend_on_it(
    gateway: Gateway, fake_model: FakeModelServer
) -> None:
    capture = Capture()
    blocks = [{"type": "text", "text": BIG_LOG[:5000]}, {"type": "text", "text": BIG_LOG[5000:]}]
    marked = [blocks[0], {**blocks[1], "cache_control": {"type": "ephemeral"}}]
    with claude(gateway, capture) as client:
        for content in (marked, blocks):
            turn = anthropic_turn()
            turn[2]["content"][0]["content"] = content
            client.messages.create(model=MODEL, max_tokens=300, messages=turn)
    replacements = [
        replaced(sent, forwarded.raw, json.dumps(content, separators=(",", ":")).encode())
        for sent, forwarded, content in zip(
            capture.bodies, model_requests(fake_model), (marked, blocks), strict=True
        )
    ]
    assert replacements[0][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in replacements[1][0]
    assert replacements[0][0]["text"] == replacements[1][0]["text"]
    assert len(replacements[0]) == 1 and replacements[0][0]["type"] == "text"


def test_requests_it_does_not_rewrite_pass_through_byte_for_byte(
    start_gateway: StartGateway, fake_model: FakeModelServer
) -> None:
    gateway = start_gateway()
    with openai.OpenAI(base_url=gateway.openai_url, api_key=API_KEY, max_retries=0) as client:
        assert [m.id for m in client.models.list()] == ["fake-model"]
    odd = b'{"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}], "model": "again"}'  # noqa: E501 - a duplicate key
    response = httpx.post(
        gateway.url + "/v1/messages",
        content=odd,
        headers={"x-api-key": API_KEY, "anthropic-version": "2023-06-01"},
    )
    assert fake_model.requests[-1].raw == odd
    assert response.status_code == 200
    assert fake_model.requests[0].path == "/v1/models"
    assert "tersify_gateway_requests_total" in gateway.metrics()


def test_status_shows_the_savings_and_forget_removes_the_sessions_replacements_and_index_entry(
    settings: Settings,
    start_worker: StartWorker,
    start_gateway: StartGateway,
    redis_client: redis.Redis,
) -> None:
    start_worker()
    gateway = start_gateway(model_prices=PRICES)
    with claude(gateway, Capture(), **{"x-tersify-session": "agent-9"}) as client:
        client.messages.create(model=MODEL, max_tokens=300, messages=anthropic_turn())

    def gateway_status() -> dict[str, Any]:
        found = json.loads(tersify(settings, "status", "--json").stdout)["gateway"]
        return found if found["totals"].get("requests") else {}

    found = wait_for(gateway_status, "the request counted", 10)
    (session,) = found["sessions"]
    assert session["session_id"] == "agent-9"
    assert session["requests"] == 1 and session["rewritten"] == 1
    assert session["tokens_before"] - session["tokens_after"] > len(BIG_LOG) // 8
    assert session["saved_usd"] > 0
    assert list(redis_client.scan_iter(keys.gateway_rewrite("*")))
    assert tersify(settings, "forget", "agent-9").returncode == 0
    assert not list(redis_client.scan_iter(keys.gateway_rewrite("*")))
    assert not redis_client.exists(keys.gateway_session("agent-9"))
    assert redis_client.zscore(keys.GATEWAY_SESSIONS, "agent-9") is None  # not in the index
    assert json.loads(tersify(settings, "status", "--json").stdout)["gateway"]["sessions"] == []


def test_the_output_behind_a_reused_replacement_is_stored_again_once_it_expired(
    settings: Settings, gateway: Gateway, fake_model: FakeModelServer, redis_client: redis.Redis
) -> None:
    capture = Capture()
    with claude(gateway, capture, **{"x-tersify-session": "agent-3"}) as client:
        client.messages.create(model=MODEL, max_tokens=300, messages=anthropic_turn())
        summary = replaced(capture.bodies[0], model_requests(fake_model)[0].raw, LITERAL)
        ref = re.search(r"tersify output ([0-9a-f]{32})", summary).group(1)  # type: ignore[union-attr]
        digest = json.loads(redis_client.get(keys.output(ref)))["payload"]
        redis_client.delete(keys.output(ref), keys.payload(digest))  # as if both expired
        assert tersify(settings, "output", ref).returncode != 0
        client.messages.create(model=MODEL, max_tokens=300, messages=anthropic_turn())
    wait_for(lambda: redis_client.exists(keys.output(ref)), "the output stored again", 10)
    read = tersify(settings, "output", ref, "--grep", "AssertionError", "--session", "agent-3")
    assert read.returncode == 0, read.stderr
    assert read.stdout.split("\t", 1)[1] == "E   AssertionError: expected 200, got 500\n"
