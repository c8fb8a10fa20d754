"""Values located in raw JSON text, so a rewrite changes them and not one byte more.

The provider's prompt cache keys on the request as the client sent it, so a rewritten request
is the client's own text with only the replaced values swapped in (``splice``), never a
re-serialization. ``json.loads`` gives values without positions; ``locate`` walks by hand only
the objects and arrays on the paths the caller names (a message list, its messages, their
content blocks) and lets the C scanner (``JSONDecoder.scan_once``) read every other value
whole, so the text is parsed about once and each value comes with its span.

A document that is not plain JSON here — a duplicate key on a walked path, trailing garbage,
values nested past the interpreter's recursion limit — raises ``UnusualJSONError``: the
gateway then forwards the request untouched rather than guess.
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from tersify.errors import TersifyError

_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
_SPACES: Final = frozenset(" \t\n\r")
# the C scanner behind json.loads: one value from a position, and where it ends (typeshed
# types its argument as the scanner itself; it takes the decoder whose settings it reads)
_SCAN: Final = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]

Path = tuple[str | int, ...]
"""Where a value sits: object keys, and ``-1`` for "any item of an array"."""
ANY_ITEM: Final = -1


class UnusualJSONError(TersifyError, ValueError):
    """The text is not JSON the gateway edits: not JSON at all, or a duplicate key on a path."""


@dataclass(slots=True)
class Node:
    """A value and its span ``[start, end)`` in the text.

    A walked object has ``members``, a walked array ``items``; any other value (a leaf, or a
    container nobody asked to walk) has its parsed ``value``.
    """

    start: int
    end: int
    value: Any = None
    members: dict[str, Node] | None = None
    items: list[Node] | None = None

    def get(self, key: str) -> Node | None:
        """The member ``key`` of a walked object; None for a missing key or another kind."""
        return self.members.get(key) if self.members is not None else None

    def leaf(self, key: str) -> Any:
        """The parsed value of member ``key`` (None when missing or walked)."""
        found = self.get(key)
        return found.value if found is not None else None

    def python(self) -> Any:
        """The value as ``json.loads`` would give it."""
        if self.members is not None:
            return {key: node.python() for key, node in self.members.items()}
        if self.items is not None:
            return [node.python() for node in self.items]
        return self.value


def locate(text: str, walk: Iterable[Path]) -> Node:
    """The document ``text`` with the containers at the ``walk`` paths walked (see the module)."""
    paths = frozenset(walk)
    walked = frozenset(path[:n] for path in paths for n in range(len(path) + 1))
    node, end = _value(text, _skip(text, 0), (), walked)
    if _skip(text, end) != len(text):
        raise UnusualJSONError("extra data after the JSON document")
    return node


def _skip(text: str, pos: int) -> int:
    if text[pos : pos + 1] not in _SPACES:  # compact JSON (what SDKs send): no regex call
        return pos
    return _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]  # always matches


def _value(text: str, pos: int, path: Path, walked: frozenset[Path]) -> tuple[Node, int]:
    char = text[pos : pos + 1]
    if char == "{" and path in walked:
        return _object(text, pos, path, walked)
    if char == "[" and path in walked:
        return _array(text, pos, path, walked)
    try:
        value, end = _SCAN(text, pos)
    except (StopIteration, ValueError) as exc:
        raise UnusualJSONError(f"not JSON at character {pos}") from exc
    except RecursionError:  # nested past the interpreter's limit: not JSON to edit here
        raise UnusualJSONError(f"nested too deep at character {pos}") from None
    return Node(pos, end, value), end


def _object(text: str, pos: int, path: Path, walked: frozenset[Path]) -> tuple[Node, int]:
    start = pos
    members: dict[str, Node] = {}
    pos = _skip(text, pos + 1)
    if text.startswith("}", pos):
        return Node(start, pos + 1, members=members), pos + 1
    while True:
        if not text.startswith('"', pos):
            raise UnusualJSONError(f"expected a key at character {pos}")
        key, pos = _scan_key(text, pos)
        if key in members:
            raise UnusualJSONError(f"duplicate key {key!r}")
        pos = _skip(text, pos)
        if not text.startswith(":", pos):
            raise UnusualJSONError(f"expected ':' at character {pos}")
        node, pos = _value(text, _skip(text, pos + 1), (*path, key), walked)
        members[key] = node
        pos, ended = _after_item(text, pos, "}")
        if ended:
            return Node(start, pos, members=members), pos


def _array(text: str, pos: int, path: Path, walked: frozenset[Path]) -> tuple[Node, int]:
    start = pos
    items: list[Node] = []
    pos = _skip(text, pos + 1)
    if text.startswith("]", pos):
        return Node(start, pos + 1, items=items), pos + 1
    inner = (*path, ANY_ITEM)
    while True:
        node, pos = _value(text, pos, inner, walked)
        items.append(node)
        pos, ended = _after_item(text, pos, "]")
        if ended:
            return Node(start, pos, items=items), pos


def _after_item(text: str, pos: int, closer: str) -> tuple[int, bool]:
    """Past what follows a member or an item: a comma (where the next one starts, False) or
    ``closer`` (just past it, True: the object or array ended)."""
    pos = _skip(text, pos)
    if text.startswith(",", pos):
        return _skip(text, pos + 1), False
    if text.startswith(closer, pos):
        return pos + 1, True
    raise UnusualJSONError(f"expected ',' or '{closer}' at character {pos}")


def _scan_key(text: str, pos: int) -> tuple[str, int]:
    try:
        key, end = _SCAN(text, pos)
    except (StopIteration, ValueError) as exc:
        raise UnusualJSONError(f"bad key at character {pos}") from exc
    return key, end


def splice(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each span ``[start, end)`` replaced by its new text (spans never overlap)."""
    out: list[str] = []
    last = 0
    for start, end, new in sorted(edits):
        if start < last:
            raise ValueError("overlapping edits")
        out += (text[last:start], new)
        last = end
    out.append(text[last:])
    return "".join(out)


def dumps(value: Any) -> str:
    """A value as compact JSON: the same text for the same value on every turn."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
