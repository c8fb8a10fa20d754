"""A test suite run twice in one agent session, through ``tersify gateway`` and a real worker:
the second run's result reaches the model as what changed since the first, and is counted."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import redis

from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer
from tests.helpers import wait_for
from tests.integration.gateway import API_KEY, Gateway, model_requests
from tests.runlogs import at, runner_log

StartWorker = Callable[..., WorkerProcess]
StartGateway = Callable[..., Gateway]
COMMAND = "python -m pytest -q tests/"


def call(call_id: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Running the tests."},
            {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": COMMAND}},
        ],
    }


def result(call_id: str, log: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": log}
    return {"role": "user", "content": [block]}


def test_a_suite_run_again_reaches_the_model_as_what_changed_and_is_counted(
    start_worker: StartWorker,
    start_gateway: StartGateway,
    fake_model: FakeModelServer,
    redis_client: redis.Redis,
) -> None:
    start_worker()
    gateway = start_gateway()
    # over the gateway's threshold (4,000 chars)
    first, second = runner_log([3, 17, 40], modules=90), runner_log([17, 40, 52], 0.7, modules=90)
    turns = [{"role": "user", "content": "Make the failing tests pass."}, call("toolu_1")]
    turns.append(result("toolu_1", first))
    with anthropic.Anthropic(base_url=gateway.url, api_key=API_KEY, max_retries=0) as client:
        one = client.messages.with_raw_response.create(
            model="claude-opus-5-5", max_tokens=100, messages=turns
        )
        turns += [{"role": "assistant", "content": "Fixed one."}, call("toolu_2")]
        turns.append(result("toolu_2", second))
        two = client.messages.with_raw_response.create(
            model="claude-opus-5-5", max_tokens=100, messages=turns
        )
    assert "tersify-reruns" not in one.headers
    assert two.headers["tersify-rewrites"] == "new=1, reused=1, fallback=0"
    assert two.headers["tersify-reruns"] == "1"
    forwarded = json.loads(model_requests(fake_model)[-1].raw)
    first_text, second_text = (
        message["content"][0]["content"]
        for message in forwarded["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
    )
    ref = first_text.split("`tersify output ")[1].split(" ")[0]
    assert second_text.startswith(f"same as run 1 (ref {ref}), except:\n")
    new = "FAILED tests/test_part52.py::test_case_52 - assert 104 == 53"
    assert f"+ {at(second, new)}| {new}" in second_text
    assert "told as what changed since its earlier run" in second_text
    assert len(second_text) < len(first_text) / 2
    session = two.headers["tersify-session"]
    counted = keys.gateway_session(session)  # written behind the request
    wait_for(lambda: redis_client.hget(counted, "requests") == "2", "both requests counted")
    counts = redis_client.hgetall(counted)
    assert counts["reruns"] == "1" and counts["rewritten"] == "2"
