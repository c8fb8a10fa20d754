"""Kimi CLI's session context (``~/.kimi/sessions/…/<id>.jsonl``): one message a line.

Messages are in the OpenAI chat shape already (``role``, ``content`` as a string or text parts,
an assistant's ``tool_calls``, a tool message's ``tool_call_id``); their text parts are joined.
The bookkeeping lines (``_usage``, ``_checkpoint``) and thinking parts are left out; a
subagent's own transcript is a file of its own, not read here.
"""

from __future__ import annotations

import json
from typing import Any

from formats.openai import Message


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [p.get("text") for p in content or [] if p.get("type") == "text"]
    return "\n".join(p for p in parts if isinstance(p, str))


def convert(raw: bytes) -> list[Message]:
    """Kimi CLI context JSONL → OpenAI chat messages."""
    out: list[Message] = []
    for line in raw.decode("utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        role = entry.get("role")
        if role in ("user", "system"):
            out.append({"role": role, "content": _text(entry.get("content"))})
        elif role == "assistant":
            message: Message = {"role": "assistant", "content": _text(entry.get("content")) or None}
            if entry.get("tool_calls"):
                message["tool_calls"] = entry["tool_calls"]
            out.append(message)
        elif role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": entry["tool_call_id"],
                 "content": _text(entry.get("content"))}
            )  # fmt: skip
    return out
