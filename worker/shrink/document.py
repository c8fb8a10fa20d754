"""A text as numbered lines: where each starts and how deeply it sits (indentation, tree art).

The shrinks select lines of a ``Doc`` and render them in order; everything here is computed
once per text and lazily, so a 2 MB output that needs only a few lookups pays for few.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import cached_property
from itertools import accumulate

from producer.classify.sanitize import lowercase

# The connectors of ``tree`` output: a line's depth is where its connector sits.
_TREE_CONNECTORS = ("├──", "└──", "|--", "`--", "├─", "└─")
_DEEP_STARTS = frozenset(" \t│|┃├└`")
_DIFF_MARKS = frozenset("+- ")


class Doc:
    """A sanitized text split on ``\\n``; line ``i`` is ``lines[i]`` (0-based)."""

    def __init__(self, text: str, *, low: str | None = None) -> None:
        self.text = text
        lines = text.split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()  # a final newline ends the last line; it starts no new one
        self.lines = lines if text else []
        if low is not None:
            self.__dict__["low"] = low

    def __len__(self) -> int:
        return len(self.lines)

    @cached_property
    def low(self) -> str:
        """The text lower-cased, index for index."""
        return lowercase(self.text)

    @cached_property
    def starts(self) -> list[int]:
        """The offset in ``text`` where each line starts."""
        return list(accumulate((len(line) + 1 for line in self.lines[:-1]), initial=0))

    def line_at(self, pos: int) -> int:
        """The index of the line that holds offset ``pos``."""
        return max(0, bisect_right(self.starts, pos) - 1)

    def end(self, index: int) -> int:
        """The offset just past line ``index`` (before its newline)."""
        return self.starts[index] + len(self.lines[index])

    def blank(self, index: int) -> bool:
        """Whether line ``index`` holds nothing but white space."""
        return not self.lines[index].strip()

    @cached_property
    def diff(self) -> bool:
        """Whether the text holds a unified diff (``git diff``, ``git log -p``, ``git show``)."""
        text = self.text
        return "\n@@ -" in text and ("\n+++ " in text or text.startswith("+++ "))

    def indent(self, index: int) -> int:
        """How deep line ``index`` sits: its leading white space, or its ``tree`` connector.

        In a diff, a line's depth is its code's: read after the ``+``/``-``/`` `` marker.
        """
        line = self.lines[index]
        if line[:1] in _DIFF_MARKS and self.diff:
            return depth(line[1:])
        return depth(line)


def depth(line: str) -> int:
    """The indentation of ``line``; a ``tree`` line is as deep as its connector."""
    if not line or line[0] not in _DEEP_STARTS:
        return 0
    head = line[:160]
    for connector in _TREE_CONNECTORS:
        at = head.find(connector)
        if at != -1 and not head[:at].strip(" │|┃\t"):
            return at + 1
    return len(line) - len(line.lstrip(" \t"))
