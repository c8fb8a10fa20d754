"""Claude Code's session JSONL: the lines of one API message merged back into that message.

Only the main thread's user and assistant lines count (no sidechains, no meta lines); the lines
of one assistant API message (same ``message.id``) are merged, a block logged after the results
of earlier ones joining its message; a ``/compact`` summary line becomes the summary marker.
"""

from __future__ import annotations

import json
from typing import Any

from formats.openai import SUMMARY, Message


def convert(raw: bytes) -> list[Message]:
    """Claude Code session JSONL → Anthropic messages, with a marker at each /compact summary."""
    messages: list[Message] = []
    last_id: str | None = None
    last_at = 0
    for line in raw.decode("utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("type") not in ("user", "assistant") or entry.get("isSidechain"):
            continue
        if entry.get("isMeta"):
            continue
        message = entry.get("message") or {}
        if entry.get("isCompactSummary"):
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            messages.append({"role": SUMMARY, "content": text})
            last_id = None
            continue
        role, content = message.get("role"), message.get("content")
        if role == "assistant" and message.get("id") and message.get("id") == last_id:
            # A later block of the same API message, logged after the results of the earlier
            # ones: it joins that message, so its results follow it as the APIs require.
            messages[last_at]["content"].extend(content if isinstance(content, list) else [])
            continue
        if role == "assistant":
            content = list(content) if isinstance(content, list) else content
            last_id, last_at = message.get("id"), len(messages)
        elif not _results_only(content):
            last_id = None
        messages.append({"role": role, "content": content})
    return messages


def _results_only(content: Any) -> bool:
    """True for a user message that only carries tool results."""
    return isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )
