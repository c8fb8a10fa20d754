"""SpecStory's Markdown of an editor agent's chat (``.specstory/history/*.md``, Markdown v2).

SpecStory writes a session as ``_**User (…)**_`` and ``_**Agent (…)**_`` sections (older files
say ``_**Assistant**_``). A user section's text is a user message. An agent section is the
agent's text and its tool uses in order: each ``<tool-use data-tool-name="N">`` block is a call
of ``N`` whose arguments are the block's ``<summary>`` line (what was asked: the file, the
command) and whose result is the rest of the block (what came back: the diff, the output), as
SpecStory recorded them; the calls have no ids in the file, so they are numbered. Thinking
blocks (``<think>``), the title and the section separators (``---``) are left out.
"""

from __future__ import annotations

import re

from formats.openai import Message, Turns

_HEADER = re.compile(r"^_\*\*(User|Agent|Assistant)\b[^\n]*\*\*_[ \t\r]*$", re.MULTILINE)
_BLOCK = re.compile(
    r'<tool-use\b[^>]*\bdata-tool-name="([^"]*)"[^>]*>(.*?)</tool-use>|<think>.*?</think>',
    re.DOTALL,
)
_SUMMARY = re.compile(r"<summary>(.*?)</summary>(.*)", re.DOTALL)


def _text(chunk: str) -> str:
    """A chunk of a section without the separator lines (and blank lines) around it."""
    lines = chunk.splitlines(keepends=True)
    while lines and lines[0].strip() in ("", "---"):
        lines.pop(0)
    while lines and lines[-1].strip() in ("", "---"):
        lines.pop()
    return "".join(lines).strip()


def _use(body: str) -> tuple[str, str]:
    """A tool-use block's summary line and the rest of its details."""
    found = _SUMMARY.search(body)
    if not found:
        return "", body.strip()
    rest = found.group(2).strip()
    rest = rest.removesuffix("</details>").strip()
    return found.group(1).strip(), rest


def _agent(section: str, turns: Turns, count: list[int]) -> None:
    at = 0
    for block in _BLOCK.finditer(section):
        if text := _text(section[at : block.start()]):
            turns.say(text)
        at = block.end()
        if block.group(1) is None:
            continue  # a thinking block
        count[0] += 1
        summary, result = _use(block.group(2))
        call_id = f"specstory-{count[0]}"
        turns.call(call_id, block.group(1), summary)
        turns.answer(call_id, result)
    if text := _text(section[at:]):
        turns.say(text)


def convert(raw: bytes) -> list[Message]:
    """SpecStory Markdown → OpenAI chat messages."""
    text = raw.decode("utf-8")
    turns = Turns()
    count = [0]
    headers = list(_HEADER.finditer(text))
    for at, header in enumerate(headers):
        end = headers[at + 1].start() if at + 1 < len(headers) else len(text)
        section = text[header.end() : end]
        if header.group(1) == "User":
            turns.add({"role": "user", "content": _text(section)})
        else:
            _agent(section, turns, count)
    return turns.flush()
