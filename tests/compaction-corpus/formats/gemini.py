"""The Gemini API's ``contents`` (a Gemini CLI session's history): role and parts.

A ``user`` entry's text parts are a user message and its ``functionResponse`` parts the results
of the calls they name; a ``model`` entry's text parts and ``functionCall`` parts are an
assistant turn. Thought parts (the model's reasoning summaries) are left out.
"""

from __future__ import annotations

import json
from typing import Any

from formats.openai import Message, Turns


def _response(response: Any) -> str:
    if isinstance(response, dict) and isinstance(response.get("output"), str):
        return str(response["output"])
    return json.dumps(response, ensure_ascii=False)


def convert(raw: bytes) -> list[Message]:
    """Gemini contents JSON → OpenAI chat messages."""
    turns = Turns()
    for entry in json.loads(raw):
        parts = entry.get("parts") or []
        if entry.get("role") == "model":
            for part in parts:
                if "functionCall" in part:
                    call = part["functionCall"]
                    turns.call(call.get("id") or call["name"], call["name"], call.get("args"))
                elif isinstance(part.get("text"), str) and not part.get("thought"):
                    turns.say(part["text"])
            continue
        for part in parts:
            if "functionResponse" in part:
                answer = part["functionResponse"]
                turns.answer(answer.get("id") or answer["name"], _response(answer.get("response")))
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
        if texts:
            turns.add({"role": "user", "content": "\n".join(texts)})
    return turns.flush()
