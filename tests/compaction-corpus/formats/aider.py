"""Aider's chat history (``.aider.chat.history.md``): each chat session's user and model turns.

A ``# aider chat started at TIME`` line opens a session (a session marker named ``TIME``);
lines starting ``#### `` are the user's message (the marker removed, consecutive lines joined),
the lines after them up to the next user message or aider line are the model's reply, verbatim
(its SEARCH/REPLACE edit blocks included). Lines starting ``> `` are aider's own terminal output
(commands, commits, token counts): the model never saw them, so they are left out.
"""

from __future__ import annotations

import re

from formats.openai import SESSION, Message

_STARTED = re.compile(r"^# aider chat started at (.+?)\s*$")


def convert(raw: bytes) -> list[Message]:
    """Aider chat history markdown → user and assistant messages, by session."""
    out: list[Message] = []
    role: str | None = None
    lines: list[str] = []

    def close() -> None:
        text = "\n".join(lines).strip("\n")
        if role is not None and text.strip():
            out.append({"role": role, "content": text})
        lines.clear()

    for line in raw.decode("utf-8").splitlines():
        started = _STARTED.match(line)
        if started:
            close()
            role = None
            out.append({"role": SESSION, "content": started.group(1)})
        elif line.startswith("#### ") or line == "####":
            if role != "user":
                close()
                role = "user"
            lines.append(line[5:])
        elif line == ">" or line.startswith("> "):
            close()
            role = None
        else:
            if role != "assistant":
                close()
                role = "assistant"
            lines.append(line)
    close()
    return out
