"""SWE-agent's ``.traj``: its ``history`` messages (role, content, tool calls, tool results).

Content given as a list of text blocks is joined; a tool message names the call it answers
(``tool_call_ids``); the agent's bookkeeping fields (``thought``, ``action``, ``agent``,
``message_type``) are left out, their text being the message's content already.
"""

from __future__ import annotations

import json
from typing import Any

from formats.openai import Message


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [c.get("text") for c in content or [] if isinstance(c, dict)]
    return "\n".join(p for p in parts if isinstance(p, str))


def convert(raw: bytes) -> list[Message]:
    """SWE-agent trajectory → OpenAI chat messages."""
    out: list[Message] = []
    for message in json.loads(raw)["history"]:
        role = message["role"]
        text = _text(message.get("content"))
        if role == "tool":
            ids = message.get("tool_call_ids") or [message.get("tool_call_id")]
            out.append({"role": "tool", "tool_call_id": ids[0], "content": text})
            continue
        converted: Message = {"role": role, "content": text}
        calls = [
            {"id": c["id"], "type": "function", "function": c["function"]}
            for c in message.get("tool_calls") or []
        ]
        if calls:
            converted["tool_calls"] = calls
        out.append(converted)
    return out
