"""GitHub Copilot CLI's session events (``events.jsonl``): messages and tool executions.

``user.message`` is a user message (its ``content``, as typed); ``assistant.message`` an
assistant turn (its text and ``toolRequests``); ``tool.execution_complete`` the result of a
call (its ``result.content``, or its error's message). The system prompt, hooks, turn markers
and a subagent's own events (those naming an ``agentId``: its own context) are left out.
"""

from __future__ import annotations

import json
from typing import Any

from formats.openai import Message, Turns


def _result(data: dict[str, Any]) -> str:
    result = data.get("result")
    if isinstance(result, dict) and isinstance(result.get("content"), str):
        return str(result["content"])
    error = data.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or "")
    return json.dumps(result, ensure_ascii=False) if result is not None else ""


def convert(raw: bytes) -> list[Message]:
    """Copilot CLI events → OpenAI chat messages."""
    turns = Turns()
    for line in raw.decode("utf-8").splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        kind, data = event.get("type"), event.get("data") or {}
        if "agentId" in event:
            continue
        if kind == "user.message":
            turns.add({"role": "user", "content": str(data.get("content") or "")})
        elif kind == "assistant.message":
            turns.say(str(data.get("content") or ""))
            for request in data.get("toolRequests") or []:
                turns.call(request["toolCallId"], request["name"], request.get("arguments"))
        elif kind == "tool.execution_complete":
            turns.answer(data["toolCallId"], _result(data))
    return turns.flush()
