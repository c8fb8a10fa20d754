"""Cline's task UI log (``ui_messages.json`` of a task): what the panel showed, in order.

Each ``api_req_started`` entry holds, as its ``request``, the user turn Cline sent to the model:
the task, or the results of the previous turn's tool calls (``[tool for 'x'] Result: …``, one
per call) with the environment details and any feedback. Between two requests, the entries are
the model's turn: its ``text``, and its calls: ``tool`` (arguments: the JSON Cline recorded,
named by its ``tool`` field), ``command``, ``use_mcp_server``, ``followup``,
``plan_mode_respond``, ``load_mcp_documentation`` and ``completion_result`` (named by their
kind; arguments: the text recorded). The next request answers the calls: split at its result
headers when there is one a call, else whole to the last call (the others get nothing). A
request that answers no call is a user message. Reasoning, the UI's echoes (command output,
MCP responses, the todo list, user feedback, the task as typed), checkpoints, retries and
partial entries are left out, as are the entries before the first request.
"""

from __future__ import annotations

import json
import re
from typing import Any

from formats.openai import Message, Turns

_CALLS = {
    "tool",
    "command",
    "use_mcp_server",
    "followup",
    "plan_mode_respond",
    "load_mcp_documentation",
    "completion_result",
}
_RESULT = re.compile(r"^\[[a-z_]+(?: for .*)?\] Result:", re.MULTILINE)


def _request(entry: dict[str, Any]) -> str | None:
    try:
        request = json.loads(entry.get("text") or "").get("request")
    except (ValueError, AttributeError):
        return None
    return request if isinstance(request, str) else None


def _name(kind: str, text: str) -> str:
    if kind != "tool":
        return kind
    try:
        return str(json.loads(text).get("tool") or kind)
    except (ValueError, AttributeError):
        return kind


def _answer(turns: Turns, pending: list[str], request: str) -> None:
    starts = [m.start() for m in _RESULT.finditer(request)]
    if len(starts) == len(pending) and starts and starts[0] == 0:
        ends = [*starts[1:], len(request)]
        for call_id, start, end in zip(pending, starts, ends, strict=True):
            turns.answer(call_id, request[start:end].rstrip())
        return
    for call_id in pending[:-1]:
        turns.answer(call_id, "")
    turns.answer(pending[-1], request)


def convert(raw: bytes) -> list[Message]:
    """Cline ui_messages.json → OpenAI chat messages."""
    turns = Turns()
    pending: list[str] = []
    started = False
    last: str | None = None
    for n, entry in enumerate(json.loads(raw)):
        kind = entry.get("say") or entry.get("ask")
        if entry.get("partial"):
            continue
        if kind == "api_req_started":
            request = _request(entry)
            if request is None or (request == last and not pending):
                continue
            started, last = True, request
            if pending:
                _answer(turns, pending, request)
                pending = []
            else:
                turns.add({"role": "user", "content": request})
        elif not started:
            continue
        elif kind == "text" and entry.get("type") == "say" and entry.get("text"):
            turns.say(entry["text"])
        elif kind in _CALLS and (kind != "completion_result" or entry.get("type") == "say"):
            text = entry.get("text") or ""
            call_id = f"cline-{n}"
            turns.call(call_id, _name(kind, text), text)
            pending.append(call_id)
    return turns.flush()
