"""The gateway under faults: Redis down, no worker, upstream errors, clients that go away, slow
summaries. None loses a request or leaves a session's gate closed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import httpx
import pytest
import redis

from tersify.client import Producer
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, ok, slow_drip, status
from tests.helpers import free_port, wait_for
from tests.integration.conftest import provider_env
from tests.integration.gateway import API_KEY, BIG_LOG, Capture, Gateway, model_requests, replaced

StartWorker = Callable[..., WorkerProcess]
StartGateway = Callable[..., Gateway]
SESSION = "faulty-session"
HEADERS = {"x-api-key": API_KEY, "anthropic-version": "2023-06-01", "x-tersify-session": SESSION}
LITERAL = json.dumps(BIG_LOG).encode()
WORKER_CALLS = "tool_output_"  # in the worker's summary requests only (the prompt's fence)


@pytest.fixture
def gateway(start_worker: StartWorker, start_gateway: StartGateway) -> Gateway:
    """A worker, then a gateway in front of the fake model, both on the test's defaults."""
    start_worker()
    return start_gateway()


def turn(stream: bool = False) -> dict[str, Any]:
    """A request body: a shell call and its large result."""
    return {
        "model": "claude-opus-5-5",
        "max_tokens": 200,
        "stream": stream,
        "messages": [
            {"role": "user", "content": "Why does the build fail?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": BIG_LOG}],
            },
        ],
    }


def raw(body: dict[str, Any]) -> bytes:
    """A request body as a client sends it."""
    return json.dumps(body).encode()


def post(gateway: Gateway, body: dict[str, Any], timeout: float = 30.0) -> httpx.Response:
    """One request through the gateway."""
    url = gateway.url + "/v1/messages"
    return httpx.post(url, content=raw(body), headers=HEADERS, timeout=timeout)


def gate_open(producer: Producer) -> bool:
    """Whether the test session's gate is open."""
    return producer.gate.is_open(SESSION)


def test_with_redis_down_the_request_goes_upstream_whole_with_a_warning(
    start_gateway: StartGateway, fake_model: FakeModelServer
) -> None:
    gateway = start_gateway(redis_url=f"redis://127.0.0.1:{free_port()}/0")
    response = post(gateway, turn())
    assert response.status_code == 200
    assert response.json()["content"][0]["text"].startswith("Summary: ")
    (forwarded,) = model_requests(fake_model)
    assert forwarded.raw == raw(turn())
    assert response.headers["warning"].startswith('199 tersify "Redis unavailable')
    assert "gateway_passed_whole" in gateway.process.log()


def test_with_no_live_worker_the_request_goes_upstream_whole_and_the_gate_stays_open(
    start_gateway: StartGateway, fake_model: FakeModelServer, producer: Producer
) -> None:
    gateway = start_gateway()
    response = post(gateway, turn())
    assert response.status_code == 200
    assert model_requests(fake_model)[0].raw == raw(turn())
    assert "no live worker" in response.headers["warning"]
    assert gate_open(producer)


def test_upstream_429_and_500_reach_the_sdk_and_its_retries_carry_the_same_bytes(
    gateway: Gateway, fake_model: FakeModelServer, producer: Producer
) -> None:
    fake_model.script([status(429, retry_after=0), status(500), ok(), status(429, retry_after=7)])
    capture = Capture()
    body = turn()
    with anthropic.Anthropic(
        base_url=gateway.url, api_key=API_KEY, max_retries=2, http_client=capture.client()
    ) as client:
        answer = client.messages.with_raw_response.create(**body)
        with pytest.raises(anthropic.RateLimitError) as limited:
            client.with_options(max_retries=0).messages.create(**body)
    assert answer.parse().content[0].type == "text"
    assert answer.headers["tersify-rewrites"] == "new=0, reused=1, fallback=0"
    assert limited.value.response.headers["retry-after"] == "7"
    assert limited.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    tries = model_requests(fake_model)
    assert len(tries) == 4
    assert len({t.raw for t in tries}) == 1  # the same replacement every time
    assert "tersify output" in replaced(capture.bodies[0], tries[0].raw, LITERAL)
    assert gate_open(producer)


def test_a_client_leaving_mid_stream_closes_the_upstream_stream(
    gateway: Gateway, fake_model: FakeModelServer, producer: Producer
) -> None:
    fake_model.script([slow_drip(8.0)])
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "POST", gateway.url + "/v1/messages", json=turn(stream=True), headers=HEADERS
        ) as response,
    ):
        first = next(response.iter_lines())
    assert first == "event: message_start"
    wait_for(lambda: fake_model.streams_cut == 1, "the upstream stream closed", 10)
    again = post(gateway, turn())
    assert again.status_code == 200
    assert again.headers["tersify-rewrites"] == "new=0, reused=1, fallback=0"
    assert gate_open(producer)


def test_a_client_leaving_while_its_summary_is_made_finds_it_made_when_it_retries(
    settings: Settings,
    start_worker: StartWorker,
    start_gateway: StartGateway,
    fake_model: FakeModelServer,
    producer: Producer,
    redis_client: redis.Redis,
) -> None:
    start_worker(**provider_env(fake_model, "anthropic"))
    gateway = start_gateway()
    fake_model.add_rule(WORKER_CALLS, ok("Summary: 12 tests failed.", latency=1.5))
    with pytest.raises(httpx.ReadTimeout):
        post(gateway, turn(), timeout=0.5)
    wait_for(lambda: list(redis_client.scan_iter(keys.gateway_rewrite("*"))), "stored", 10)
    assert gate_open(producer)
    again = post(gateway, turn())
    assert again.headers["tersify-rewrites"] == "new=0, reused=1, fallback=0"
    summary = replaced(raw(turn()), model_requests(fake_model)[0].raw, LITERAL)
    assert summary.startswith("Summary: 12 tests failed.")
    assert sum(1 for r in fake_model.requests if WORKER_CALLS.encode() in r.raw) == 1


def test_a_summary_past_the_deadline_falls_back_and_opens_the_gate_at_once(
    start_worker: StartWorker,
    start_gateway: StartGateway,
    fake_model: FakeModelServer,
    producer: Producer,
) -> None:
    start_worker(**{**provider_env(fake_model, "anthropic"), "model_timeout_seconds": "20"})
    gateway = start_gateway(gateway_wait_seconds="1")
    fake_model.add_rule(WORKER_CALLS, ok("too late", latency=8))
    first = post(gateway, turn())
    assert first.headers["tersify-rewrites"] == "new=1, reused=0, fallback=1"
    assert gate_open(producer)
    second = post(gateway, turn())
    assert second.headers["tersify-rewrites"] == "new=0, reused=1, fallback=0"
    sent = raw(turn())
    fallbacks = [replaced(sent, r.raw, LITERAL) for r in model_requests(fake_model)]
    assert fallbacks[0] == fallbacks[1]
    assert "cut to its key lines" in fallbacks[0] and "FAILED" in fallbacks[0]
