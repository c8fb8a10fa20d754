"""The pi coding agent's session file (``~/.pi/agent/sessions/…/*.jsonl``): one entry a line.

A ``message`` entry holds one message: a ``user`` message (its text parts), an ``assistant``
turn (its text parts and ``toolCall`` parts), a ``toolResult`` answering its call (its text
parts), or a ``bashExecution`` the user ran from the prompt (a user message: the command, then
its output, as pi puts it in the context). A ``compaction`` entry becomes the summary marker
(pi's own compaction of the entries before it). Thinking parts, the session header, model and
thinking-level changes, and aborted turns with no content are left out. A line that holds two
entries (an unterminated write) is read as both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from formats.openai import SUMMARY, Message, Turns


def entries(raw: bytes) -> Iterator[dict[str, Any]]:
    """Every JSON object of the file in order, however many a line holds."""
    decoder = json.JSONDecoder()
    for line in raw.decode("utf-8").splitlines():
        at = 0
        while at < len(line):
            if line[at].isspace():
                at += 1
                continue
            entry, at = decoder.raw_decode(line, at)
            yield entry


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [p.get("text") for p in content or [] if p.get("type") == "text"]
    return "\n".join(p for p in parts if isinstance(p, str))


def convert(raw: bytes) -> list[Message]:
    """pi session JSONL → OpenAI chat messages."""
    turns = Turns()
    for entry in entries(raw):
        if entry.get("type") == "compaction":
            turns.add({"role": SUMMARY, "content": entry.get("summary") or ""})
            continue
        if entry.get("type") != "message":
            continue
        message = entry["message"]
        role = message.get("role")
        if role == "user":
            turns.add({"role": "user", "content": _texts(message.get("content"))})
        elif role == "bashExecution":
            text = "\n".join(str(message.get(k) or "") for k in ("command", "output"))
            turns.add({"role": "user", "content": text})
        elif role == "assistant":
            for part in message.get("content") or []:
                if part.get("type") == "text":
                    turns.say(part.get("text") or "")
                elif part.get("type") == "toolCall":
                    turns.call(part["id"], part["name"], part.get("arguments") or {})
        elif role == "toolResult":
            turns.answer(message["toolCallId"], _texts(message.get("content")))
    return turns.flush()
