"""OpenHands' conversation events (agent SDK): messages, actions and their observations.

A ``MessageEvent`` is a user or assistant message (its text parts); an ``ActionEvent`` is a
tool call of the assistant turn its model response started (its thought as that turn's text,
its ``tool_call`` as the call); an ``ObservationEvent`` or ``AgentErrorEvent`` answers its
call; a ``Condensation`` with a summary becomes the summary marker (OpenHands' own
condensation of the events before it). The system prompt and other events are left out.
"""

from __future__ import annotations

import json
from typing import Any

from formats.openai import SUMMARY, Message, Turns


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [c.get("text") for c in content or [] if isinstance(c, dict)]
    return "\n".join(p for p in parts if isinstance(p, str))


def convert(raw: bytes) -> list[Message]:
    """OpenHands events JSON → OpenAI chat messages."""
    turns = Turns()
    response: str | None = None
    for event in json.loads(raw):
        kind = event.get("kind")
        if kind == "MessageEvent":
            message = event.get("llm_message") or {}
            text = _text(message.get("content"))
            if message.get("role") == "assistant":
                turns.say(text)
            else:
                turns.add({"role": "user", "content": text})
            response = None
        elif kind == "ActionEvent":
            call = event.get("tool_call") or {}
            if event.get("llm_response_id") != response:
                turns.flush()
                turns.say(_text(event.get("thought")))
                response = event.get("llm_response_id")
            turns.call(call["id"], call["name"], call.get("arguments"))
        elif kind in ("ObservationEvent", "AgentErrorEvent"):
            observation = event.get("observation") or {}
            text = _text(observation.get("content")) if observation else str(event.get("error"))
            turns.answer(event["tool_call_id"], text)
        elif kind == "Condensation" and event.get("summary"):
            turns.add({"role": SUMMARY, "content": str(event["summary"])})
            response = None
    return turns.flush()
