"""Conversations for tests, in the OpenAI Chat Completions shape: a tool call, its result."""

from __future__ import annotations

import json
from typing import Any

Msg = dict[str, Any]


def call(call_id: str, name: str, arguments: Msg) -> Msg:
    """An assistant message with one tool call and no text."""
    fn = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": fn}],
    }


def result(call_id: str, output: str) -> Msg:
    """The tool message answering ``call_id``."""
    return {"role": "tool", "tool_call_id": call_id, "content": output}


def exchange(call_id: str, name: str, arguments: Msg, output: str) -> list[Msg]:
    """A tool call and its result."""
    return [call(call_id, name, arguments), result(call_id, output)]


def bash_steps(steps: list[tuple[str, str]]) -> list[Msg]:
    """Each ``(command, output)`` as a ``bash`` call ``c0``, ``c1``… and its result."""
    return [
        message
        for i, (command, output) in enumerate(steps)
        for message in exchange(f"c{i}", "bash", {"command": command}, output)
    ]
