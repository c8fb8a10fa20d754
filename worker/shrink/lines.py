"""Lines of a text: how deep one sits, and which line holds a position, in linear time.

Splitting a text into lines is ``tersify.text.cut.split_lines``; a ``Doc``
(``worker.shrink.document``) holds a text's lines and what is computed once over them.
"""

from __future__ import annotations

# The connectors of ``tree`` output: a line's depth is where its connector sits.
_TREE_CONNECTORS = ("├──", "└──", "|--", "`--", "├─", "└─")
_DEEP_STARTS = frozenset(" \t│|┃├└`")
_TREE_STARTS = frozenset("│|┃├└`")


def depth(line: str) -> int:
    """The indentation of ``line``; a ``tree`` line is as deep as its connector."""
    if not line or line[0] not in _DEEP_STARTS:
        return 0
    stripped = line.lstrip(" \t")
    if stripped[:1] not in _TREE_STARTS:
        return len(line) - len(stripped)  # no tree art before the text: plain indentation
    head = line[:160]
    for connector in _TREE_CONNECTORS:
        at = head.find(connector)
        if at != -1 and not head[:at].strip(" │|┃\t"):
            return at + 1
    return len(line) - len(line.lstrip(" \t"))


def newlines_before(text: str, offsets: list[int]) -> list[int]:
    """For each offset of ``text`` (ascending), how many newlines come before it: the index
    of the line holding it. One pass however many offsets, and no index of every line."""
    numbers: list[int] = []
    number, counted = 0, 0
    for at in offsets:
        number += text.count("\n", counted, at)
        counted = at
        numbers.append(number)
    return numbers


class LineLocator:
    """Finds the line holding a position; visiting positions in ascending order costs O(n) total."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._reset()

    def _reset(self) -> None:
        self._number = 1
        self._start = 0
        end = self._text.find("\n")
        self._end = len(self._text) if end == -1 else end

    def locate(self, pos: int) -> tuple[int, int, int]:
        """The line that holds ``pos``: its 1-based number, start and end (before the newline)."""
        text = self._text
        if pos < self._start:
            self._reset()
        if pos > self._end:
            self._number += text.count("\n", self._end, pos)
            self._start = text.rfind("\n", self._end, pos) + 1
            end = text.find("\n", pos)
            self._end = len(text) if end == -1 else end
        return self._number, self._start, self._end
