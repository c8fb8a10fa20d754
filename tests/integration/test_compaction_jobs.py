"""Compaction jobs through a real worker and Redis, against the fake model in both wire formats
and with the model failing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from producer.client import Producer
from producer.compaction import CompactionMethod
from producer.contract import FallbackReason
from tests.fakemodel import FakeModelServer, status
from tests.integration.conftest import provider_env
from worker.compaction.summary import BANNER, END_MARKER
from worker.processes.worker_process import WorkerProcess

StartWorker = Callable[..., WorkerProcess]
LATEST_REQUEST = "Now update CHANGELOG.md with the fix, please."


def openai_history() -> list[dict[str, Any]]:
    """Twelve OpenAI-style messages with two tool round trips."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": "pytest -x"})},
    }
    call2 = {
        "id": "call_2",
        "type": "function",
        "function": {"name": "read", "arguments": json.dumps({"path": "totals.py"})},
    }
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "The invoice tests fail. Find out why and fix them."},
        {"role": "assistant", "content": "Running the tests.", "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "FAILED tests/test_totals.py::test_parse_amount - AssertionError\n1 failed",
        },
        {"role": "assistant", "content": "Reading the parser.", "tool_calls": [call2]},
        {"role": "tool", "tool_call_id": "call_2", "content": "def parse_amount(text): ..."},
        {"role": "assistant", "content": "parse_amount ignores the European decimal comma."},
        {"role": "user", "content": "Fix it without changing the public API."},
        {"role": "assistant", "content": "Fixed invoicing/totals.py; all 73 tests pass."},
        {"role": "user", "content": "Thanks. Anything else failing?"},
        {"role": "assistant", "content": "No, the suite is green."},
        {"role": "user", "content": LATEST_REQUEST},
    ]


def anthropic_history() -> list[dict[str, Any]]:
    """The same conversation in the Anthropic Messages shape."""
    return [
        {"role": "user", "content": "The invoice tests fail. Find out why and fix them."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Running the tests."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "bash",
                    "input": {"command": "pytest"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "FAILED tests/test_totals.py::test_parse_amount",
                }
            ],
        },
        {"role": "assistant", "content": "parse_amount ignores the European decimal comma."},
        {"role": "user", "content": "Fix it without changing the public API."},
        {"role": "assistant", "content": "Fixed invoicing/totals.py; all 73 tests pass."},
        {"role": "user", "content": "Thanks. Anything else failing?"},
        {"role": "assistant", "content": "No, the suite is green."},
        {"role": "user", "content": LATEST_REQUEST},
    ]


def orphans(messages: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """(calls without a result, results without a call), in either shape."""
    calls: set[str] = set()
    results: set[str] = set()
    for m in messages:
        calls |= {c["id"] for c in m.get("tool_calls") or []}
        if m.get("role") == "tool":
            results.add(m["tool_call_id"])
        if isinstance(m.get("content"), list):
            for block in m["content"]:
                if block.get("type") == "tool_use":
                    calls.add(block["id"])
                if block.get("type") == "tool_result":
                    results.add(block["tool_use_id"])
    return calls - results, results - calls


@pytest.mark.parametrize(
    ("provider", "history", "path"),
    [
        ("openai", openai_history, "/v1/chat/completions"),
        ("anthropic", anthropic_history, "/v1/messages"),
    ],
)
def test_a_compaction_job_is_summarized_by_the_model_in_both_wire_formats(
    provider: str,
    history: Callable[[], list[dict[str, Any]]],
    path: str,
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
) -> None:
    start_worker(**provider_env(fake_model, provider))
    messages = history()
    handle = producer.compact(session_id="c1", messages=messages, protect_first=1, protect_last=2)
    result = handle.wait(30)
    assert result.method is CompactionMethod.LLM
    assert result.provider == provider
    assert [r.path for r in fake_model.requests] == [path]
    assert result.messages[0] == messages[0]
    assert result.messages[-2:] == messages[-2:]
    assert len(result.messages) == result.messages_after < result.messages_before == len(messages)
    assert result.summary.count(BANNER) == 1
    assert LATEST_REQUEST in result.summary  # the Active Task quotes the real latest request
    assert result.summary.rstrip().endswith(END_MARKER)
    assert orphans(result.messages) == (set(), set())


def test_a_failing_model_gives_the_extractive_fallback_summary_not_an_error(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    fake_model.set_default(status(500))
    start_worker(**provider_env(fake_model, "anthropic"))
    result = producer.compact(session_id="c2", messages=openai_history(), protect_last=2).wait(30)
    assert result.method is CompactionMethod.FALLBACK
    assert result.fallback_reason is FallbackReason.SERVER_ERROR
    assert result.summary.startswith(BANNER)
    assert "tests/test_totals.py" in result.summary  # files seen survive in the fallback
    assert LATEST_REQUEST in result.summary
    assert orphans(result.messages) == (set(), set())
