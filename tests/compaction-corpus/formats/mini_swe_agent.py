"""mini-swe-agent's ``.traj.json``: its messages with role and content (``extra`` dropped)."""

from __future__ import annotations

import json

from formats.openai import Message


def convert(raw: bytes) -> list[Message]:
    """mini-swe-agent trajectory → OpenAI-style messages (role and content, as written)."""
    data = json.loads(raw)
    return [{"role": m["role"], "content": m["content"]} for m in data["messages"]]
