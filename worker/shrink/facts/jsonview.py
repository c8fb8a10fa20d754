"""The shape of a JSON value in one line: key names with sizes, array lengths, scalar previews."""

from __future__ import annotations

import json
from typing import Any

from tersify.worker.shrink.textcut import ELLIPSIS

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
