"""Compact views of JSON values, and finding the JSON value around a position in raw text."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from worker.shrink.textcut import ELLIPSIS

_DECODER = json.JSONDecoder()
_BRACE_TRIES = 8
_BRACE_REACH = 20_000
_KEY_REACH = 300


_SHORT = 40


def _scalar(value: Any, max_str: int) -> str:
    # Names and identifiers stay whole; only prose-length strings shrink.
    if isinstance(value, str) and len(value) > max(max_str, _SHORT):
        value = value[:max_str] + ELLIPSIS
    return json.dumps(value, ensure_ascii=False)


def compact(value: Any, limit: int, *, depth: int = 4) -> str:
    """``value`` as one-line JSON of at most ``limit`` chars; long strings shrink first."""
    view = ""
    for max_str, drop_long in ((48, False), (16, False), (0, False), (0, True)):
        view = _compact(value, limit, max_str=max_str, depth=depth, drop_long=drop_long)
        if not view.endswith(ELLIPSIS):
            return view
    return view


def _compact(value: Any, limit: int, *, max_str: int, depth: int, drop_long: bool) -> str:
    parts: list[str] = []
    used = 0

    def put(piece: str) -> bool:
        nonlocal used
        if used + len(piece) > limit - 1:
            return False
        parts.append(piece)
        used += len(piece)
        return True

    def walk(node: Any, level: int) -> bool:
        if isinstance(node, dict):
            if level >= depth and node:
                return put(f"{{…{len(node)} keys}}")
            if not put("{"):
                return False
            first = True
            for key, child in node.items():
                if drop_long and isinstance(child, str) and len(child) > _SHORT:
                    continue
                if not put(("" if first else ",") + _scalar(str(key), 80) + ":"):
                    return False
                if not walk(child, level + 1):
                    return False
                first = False
            return put("}")
        if isinstance(node, list):
            if level >= depth and node:
                return put(f"[…{len(node)} items]")
            if not put("["):
                return False
            for i, child in enumerate(node):
                if not put("," if i else "") or not walk(child, level + 1):
                    return False
            return put("]")
        return put(_scalar(node, max_str))

    if walk(value, 0):
        return "".join(parts)
    return "".join(parts) + ELLIPSIS


def outline(value: Any, limit: int) -> str:
    """The shape of a value: key names with sizes, array lengths, scalar previews."""
    if isinstance(value, dict):
        items = [f"{key}: {_size(child)}" for key, child in value.items()]
        return _fit(f"object with {len(value)} keys: ", items, limit)
    if isinstance(value, list):
        kinds = {type(item).__name__ for item in value[:200]}
        kind = {"dict": "objects", "list": "arrays", "str": "strings"}.get(
            next(iter(kinds)) if len(kinds) == 1 else "", "values"
        )
        keys = record_keys(value)
        head = f"array of {len(value)} {kind}"
        return _fit(head + ("; keys: " if keys else ""), keys, limit) if keys else head
    return _scalar(value, limit)


def _size(value: Any) -> str:
    if isinstance(value, dict):
        return f"{{{len(value)} keys}}"
    if isinstance(value, list):
        return f"[{len(value)}]"
    if isinstance(value, str) and len(value) > 40:
        return f"text({len(value)})"
    return _scalar(value, 40)


def _fit(head: str, items: list[str], limit: int) -> str:
    out = head
    for i, item in enumerate(items):
        piece = (", " if i else "") + item
        if len(out) + len(piece) + 3 > limit:
            return out + ", …"
        out += piece
    return out


def record_keys(value: list[Any]) -> list[str]:
    """Keys of the objects of an array, most common first (from the first 200)."""
    counts: dict[str, int] = {}
    for item in value[:200]:
        if isinstance(item, dict):
            for key in item:
                counts[str(key)] = counts.get(str(key), 0) + 1
    return sorted(counts, key=lambda k: -counts[k])


@dataclass(frozen=True, slots=True)
class Found:
    """A JSON value found around a position: its key (if any), value and raw span."""

    key: str | None
    value: Any
    start: int
    end: int


def value_at(text: str, pos: int) -> Found | None:
    """The value named by the key at ``pos``, else the innermost object enclosing ``pos``."""
    key = _key_at(text, pos)
    if key is not None:
        name, after = key
        start = _skip_space(text, after + 1)
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            return None
        return Found(name, value, start, end)
    brace = pos
    for _ in range(_BRACE_TRIES):
        brace = text.rfind("{", max(0, pos - _BRACE_REACH), brace)
        if brace == -1:
            return None
        try:
            value, end = _DECODER.raw_decode(text, brace)
        except ValueError:
            continue
        if end > pos:
            return Found(_key_before(text, brace), value, brace, end)
    return None


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def _key_at(text: str, pos: int) -> tuple[str, int] | None:
    """If ``pos`` is inside an object key, the key and the index of its colon."""
    open_quote = text.rfind('"', max(0, pos - _KEY_REACH), pos + 1)
    if open_quote == -1:
        return None
    close = text.find('"', pos, pos + _KEY_REACH)
    if close == -1:
        return None
    colon = _skip_space(text, close + 1)
    if colon >= len(text) or text[colon] != ":":
        return None
    before = text[max(0, open_quote - 200) : open_quote].rstrip()
    if not before or before[-1] not in "{,":
        return None
    return text[open_quote + 1 : close], colon


def _key_before(text: str, brace: int) -> str | None:
    """The key an object is the value of: the ``"name":`` right before ``brace``."""
    head = text[max(0, brace - 300) : brace].rstrip()
    if not head.endswith(":"):
        return None
    head = head[:-1].rstrip()
    if not head.endswith('"'):
        return None
    start = head.rfind('"', 0, len(head) - 1)
    return head[start + 1 : -1] if start != -1 else None
