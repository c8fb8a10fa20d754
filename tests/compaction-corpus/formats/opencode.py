"""OpenCode's session export (``{"info", "messages"}``): each message's parts, in order.

A user message's text parts are its content; an assistant message's text and tool parts become
assistant turns (text, then the calls of one step) each followed by its tool results (the
tool's output, or its error). A tool part's ``callID`` may be redacted in the published copy:
the part's own id names the call then. Reasoning, step, patch and file parts are left out.
"""

from __future__ import annotations

import json
from typing import Any

from formats.openai import Message, Turns


def _result(state: dict[str, Any]) -> str:
    if state.get("status") == "error":
        return str(state.get("error") or "")
    output = state.get("output")
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def convert(raw: bytes) -> list[Message]:
    """OpenCode export JSON → OpenAI chat messages."""
    data = json.loads(raw)
    turns = Turns()
    for message in data["messages"]:
        role = message["info"]["role"]
        parts = message.get("parts") or []
        if role == "user":
            texts = [p["text"] for p in parts if p.get("type") == "text" and not p.get("synthetic")]
            turns.add({"role": "user", "content": "\n\n".join(texts)})
            continue
        for part in parts:
            if part.get("type") == "text" and part.get("text", "").strip():
                turns.say(part["text"])
            elif part.get("type") == "tool":
                call_id = part.get("callID") or ""
                call_id = part["id"] if call_id in ("", "REDACTED") else call_id
                state = part.get("state") or {}
                turns.call(call_id, part["tool"], state.get("input") or {})
                turns.answer(call_id, _result(state))
    return turns.flush()
