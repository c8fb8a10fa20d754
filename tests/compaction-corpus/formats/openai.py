"""The OpenAI chat shape the converters write: assistant turns with tool calls, tool results."""

from __future__ import annotations

import json
from typing import Any

Message = dict[str, Any]
SUMMARY = "compact-summary"
SESSION = "session-start"


def arguments(value: Any) -> str:
    """Tool arguments as the OpenAI shape carries them: text as it came, else its JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def call(call_id: str, name: str, args: Any) -> Message:
    """One entry of an assistant message's ``tool_calls``."""
    fn = {"name": name, "arguments": arguments(args)}
    return {"id": call_id, "type": "function", "function": fn}


def assistant(text: str, calls: list[Message]) -> Message:
    """An assistant message: its text (None when it has none) and its tool calls."""
    message: Message = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def result(call_id: str, content: str) -> Message:
    """A tool message answering ``call_id``."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


class Turns:
    """Collects one assistant turn's text and calls, then its results, in API order."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._text: list[str] = []
        self._calls: list[Message] = []
        self._results: list[Message] = []

    def say(self, text: str) -> None:
        """Assistant text; after results it opens a new assistant turn."""
        if self._results:
            self.flush()
        if text:
            self._text.append(text)

    def call(self, call_id: str, name: str, args: Any) -> None:
        """A tool call of the current assistant turn (after results: a new turn)."""
        if self._results:
            self.flush()
        self._calls.append(call(call_id, name, args))

    def answer(self, call_id: str, content: str) -> None:
        """A result of one of the current turn's calls."""
        self._results.append(result(call_id, content))

    def add(self, message: Message) -> None:
        """A message of another role (user, system, summary marker), after the current turn."""
        self.flush()
        self.messages.append(message)

    def flush(self) -> list[Message]:
        """Write out the pending assistant turn and its results."""
        if self._text or self._calls:
            self.messages.append(assistant("\n\n".join(self._text), self._calls))
        self.messages += self._results
        self._text, self._calls, self._results = [], [], []
        return self.messages
