"""Where a text may be cut, and its lines: the one implementation for producer and worker.

A cut never falls inside a surrogate pair or a CRLF pair, nor between a character and what
belongs to it (combining marks, variation selectors, emoji skin tones, either side of a
zero-width joiner). Past ``MAX_CLUSTER_SHIFT`` characters (a run of hundreds of marks) a plain
character boundary is good enough.
"""

from __future__ import annotations

import unicodedata

MAX_CLUSTER_SHIFT = 32
_ZWJ = "\u200d"
_JOINERS = frozenset("\u200c\ufe0e\ufe0f")


def _belongs_to_previous(char: str) -> bool:
    return (
        char in _JOINERS
        or char == _ZWJ
        or "\U0001f3fb" <= char <= "\U0001f3ff"  # skin tones
        or "\udc00" <= char <= "\udfff"  # the low half of a surrogate pair
        or unicodedata.category(char) in ("Mn", "Mc", "Me")
    )


def is_boundary(text: str, index: int) -> bool:
    """Whether ``text`` may be cut before ``text[index]`` (the ends always may)."""
    if index <= 0 or index >= len(text):
        return True
    before, after = text[index - 1], text[index]
    if before == _ZWJ or (before == "\r" and after == "\n"):
        return False
    return not _belongs_to_previous(after)


def safe_end(text: str, pos: int) -> int:
    """The largest index <= ``pos`` (clamped to the text) where ``text[:index]`` may end."""
    pos = max(0, min(pos, len(text)))
    for shift in range(min(MAX_CLUSTER_SHIFT, pos) + 1):
        if is_boundary(text, pos - shift):
            return pos - shift
    return pos


def safe_start(text: str, pos: int) -> int:
    """The smallest index >= ``pos`` (clamped to the text) where ``text[index:]`` may start."""
    pos = max(0, min(pos, len(text)))
    for shift in range(min(MAX_CLUSTER_SHIFT, len(text) - pos) + 1):
        if is_boundary(text, pos + shift):
            return pos + shift
    return pos


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their ``\\n`` (a ``\\r`` before it stays); a final newline
    adds no empty line, and an empty text has none."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines
