"""Codex CLI's rollout JSONL: the response items the model saw, as OpenAI chat messages.

``message`` items keep their role (``developer`` included) and their text parts joined;
``function_call`` / ``custom_tool_call`` / ``local_shell_call`` items join the assistant turn
they belong to (free-form input and a local shell's action as their arguments), their outputs
follow as tool messages; a ``compacted`` line becomes the summary marker. Reasoning items
(encrypted) and ``event_msg`` lines (which repeat the items) are left out.
"""

from __future__ import annotations

import json
from typing import Any

from formats.openai import SUMMARY, Message, Turns

_ARGUMENTS = {
    "function_call": "arguments",
    "custom_tool_call": "input",
    "local_shell_call": "action",
}
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [c.get("text") for c in content or [] if isinstance(c, dict)]
    return "\n".join(p for p in parts if isinstance(p, str))


def _output(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return str(output["content"])
    return _text(output) if isinstance(output, list) else json.dumps(output, ensure_ascii=False)


def convert(raw: bytes) -> list[Message]:
    """Codex rollout → OpenAI chat messages, with a marker at each ``compacted`` line."""
    turns = Turns()
    for line in raw.decode("utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        kind, item = entry.get("type"), entry.get("payload") or {}
        if kind == "compacted":
            turns.add({"role": SUMMARY, "content": str(item.get("message") or "")})
            continue
        if kind != "response_item":
            continue
        itype = item.get("type")
        if itype == "message" and item.get("role") == "assistant":
            turns.say(_text(item.get("content")))
        elif itype == "message":
            turns.add({"role": item.get("role"), "content": _text(item.get("content"))})
        elif itype in _ARGUMENTS:
            name = "local_shell" if itype == "local_shell_call" else str(item.get("name"))
            call_id = str(item.get("call_id") or item.get("id"))
            turns.call(call_id, name, item.get(_ARGUMENTS[itype]))
        elif itype in _OUTPUTS:
            turns.answer(str(item.get("call_id")), _output(item.get("output")))
    return turns.flush()
