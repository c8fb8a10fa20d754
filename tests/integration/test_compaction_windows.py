"""A conversation whose middle is past one request, compacted through a real worker in either
wire format: the middle is read in windows whose notes the summary request reads instead of
the transcript; a window that fails is covered by the extractive shrink of its lines."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tersify.chat.compaction import CompactionMethod
from tersify.client import Producer
from tersify.worker.compaction.prompt import NOTED_INTRO
from tersify.worker.compaction.windows import NOTES_SYSTEM
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, RecordedRequest, status
from tests.integration.conftest import provider_env

StartWorker = Callable[..., WorkerProcess]
ENV = {"model_window_chars": "12000", "model_max_attempts": "1"}


def long_history() -> list[dict[str, Any]]:
    """A system prompt, 120 exchanges about one module each, and an open request."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(120):
        messages += [
            {"role": "user", "content": f"Review module_{n}.py and say what it does. " * 4},
            {
                "role": "assistant",
                "content": f"module_{n}.py parses invoice batch {n}; it rounds at step {n}. " * 4,
            },
        ]
    messages.append({"role": "user", "content": "Now write the CHANGELOG entry."})
    return messages


def body_text(request: RecordedRequest) -> str:
    return json.dumps(request.body)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_long_middle_is_read_in_windows_and_summarized_from_their_notes(
    provider: str,
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
) -> None:
    start_worker(**provider_env(fake_model, provider), **ENV)
    fake_model.add_rule("Part 2 of", status(500))
    handle = producer.compact(
        session_id=f"cw-{provider}", messages=long_history(), protect_first=1, protect_last=2
    )
    result = handle.wait(60)
    assert result.method is CompactionMethod.LLM, result.fallback_detail
    bodies = [body_text(r) for r in fake_model.requests]
    notes = [b for b in bodies if NOTES_SYSTEM[:40] in b]
    summaries = [b for b in bodies if NOTED_INTRO[:40] in b]
    assert len(notes) >= 4 and len(summaries) == 1
    assert len(bodies) == len(notes) + 1
    for body in notes:  # every window within one request's size
        assert len(json.loads(body).get("messages", [{}])[-1].get("content", "")) < 14_000
    assert "no model read it (server_error)" in summaries[0]
    count = len(notes)
    assert all(f"[part {n} of {count}]" in summaries[0] for n in range(1, count + 1))
    assert summaries[0].count("Summary: Part ") == count - 1  # the fake's notes, but part 2's
    assert result.input_tokens is not None and result.input_tokens > sum(map(len, notes)) // 8
