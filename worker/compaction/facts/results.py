"""A tool result as lines to read: a JSON result unpacked into ``key: value`` lines.

Some tools answer with a JSON object (``{"exit_code": 1, "output": "…\\n…"}``, ``{"error":
"…"}``) or a list of such objects, the text of a run escaped inside one string. Read as it
came, its lines are one line of JSON; unpacked, each scalar is a ``key: value`` line (a severity
word as a field again, ``error: …``) and a string of several lines is its key's line followed
by those lines, so the error and test shapes read it as they read any output. A line of JSON
after a tool's header lines is unpacked in its place.
"""

from __future__ import annotations

import json
from typing import Any

_MAX_CHARS = 2_000_000
_MAX_DEPTH = 6
_MAX_ITEMS = 500


def _lines(value: Any, key: str, depth: int, out: list[str]) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        for name, inner in list(value.items())[:_MAX_ITEMS]:
            _lines(inner, str(name), depth + 1, out)
    elif isinstance(value, list):
        for inner in value[:_MAX_ITEMS]:
            _lines(inner, key, depth + 1, out)
    elif isinstance(value, str) and "\n" in value:
        out.append(f"{key}:" if key else "")
        out.extend(value.splitlines())
    elif value is not None:
        text = json.dumps(value) if not isinstance(value, str) else value
        out.append(f"{key}: {text}" if key else text)


def _unpacked(text: str) -> str | None:
    """``text`` unpacked when it is one JSON object or list, else None."""
    if text.lstrip()[:1] not in ("{", "[") or len(text) > _MAX_CHARS:
        return None
    try:
        loaded = json.loads(text)
    except ValueError:
        return None
    if not isinstance(loaded, (dict, list)):
        return None
    out: list[str] = []
    _lines(loaded, "", 0, out)
    return "\n".join(out)


def readable(content: str) -> str:
    """``content`` as lines to read: a JSON object or list unpacked, whole or as one of its
    lines (after a tool's header lines), any other text as it is."""
    whole = _unpacked(content)
    if whole is not None:
        return whole
    if "{" not in content:
        return content
    lines = content.split("\n")
    return "\n".join(_unpacked(line) or line if line[:1] in "{[" else line for line in lines)
