"""The pre-send repair pass as public surface: ``tersify repair`` and ``POST /v1/repair``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tersify.settings import Settings
from tests.helpers import tersify
from tests.integration.test_api import TOKEN, ApiServer, assert_problem, client

Msg = dict[str, Any]


def broken_history() -> list[Msg]:
    """An Anthropic history with an unanswered ``tool_use`` and a stale result."""
    return [
        {"role": "user", "content": "read both files"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading them."},
                {"type": "tool_use", "id": "tu_1", "name": "read", "input": {"path": "a.py"}},
                {"type": "tool_use", "id": "tu_2", "name": "read", "input": {"path": "b.py"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "a"}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "tu_9", "content": "x"}],
        },
    ]


def repaired_history() -> list[Msg]:
    """``broken_history`` as the APIs accept it: tu_2 and the stale result gone."""
    messages = broken_history()[:3]
    messages[1]["content"] = messages[1]["content"][:2]
    return messages


@pytest.fixture
def repair_api(settings: Settings, tmp_path: Path) -> Iterator[ApiServer]:
    """A one-process API server on the test's Redis."""
    server = ApiServer(settings, tmp_path, workers=1, api_tokens=TOKEN)
    yield server.start()
    server.stop()


def test_post_repair_answers_the_history_the_apis_accept(repair_api: ApiServer) -> None:
    with client(repair_api) as http:
        response = http.post("/v1/repair", json={"messages": broken_history()})
        assert response.status_code == 200, response.text
        assert response.json() == {"messages": repaired_history(), "removed": 1}
        valid = repaired_history()
        assert http.post("/v1/repair", json={"messages": valid}).json()["messages"] == valid
        mixed = [*broken_history(), {"role": "tool", "tool_call_id": "c1", "content": "x"}]
        assert_problem(http.post("/v1/repair", json={"messages": mixed}), 422, "invalid_job")
    with client(repair_api, token=None) as anonymous:
        assert anonymous.post("/v1/repair", json={"messages": []}).status_code == 401


def test_tersify_repair_prints_the_repaired_messages(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "messages.json"
    path.write_text(json.dumps({"messages": broken_history()}), encoding="utf-8")
    done = tersify(settings, "repair", str(path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == repaired_history()
    assert "4 → 3 messages" in done.stderr
    piped = tersify(settings, "repair", "-", stdin=json.dumps(broken_history()))
    assert json.loads(piped.stdout) == repaired_history()
    bad = tersify(settings, "repair", "-", stdin='{"messages": 3}')
    assert bad.returncode == 2
    assert bad.stderr == (
        'tersify repair: refused: expected a JSON list of messages or {"messages": [...]}\n'
    )
