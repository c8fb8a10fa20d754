"""A text as numbered lines: where each starts and how deeply it sits (indentation, tree art).

The shrinks select lines of a ``Doc`` and render them in order; everything here is computed
once per text and lazily, so a 2 MB output that needs only a few lookups pays for few.
"""

from __future__ import annotations

from functools import cached_property

from tersify.text.sanitize import lowercase

# The connectors of ``tree`` output: a line's depth is where its connector sits.
_TREE_CONNECTORS = ("├──", "└──", "|--", "`--", "├─", "└─")
_DEEP_STARTS = frozenset(" \t│|┃├└`")
_TREE_STARTS = frozenset("│|┃├└`")
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

    def blank(self, index: int) -> bool:
        """Whether line ``index`` holds nothing but white space."""
        return not self.lines[index].strip()

    @cached_property
    def diff(self) -> bool:
        """Whether the text holds a unified diff (``git diff``, ``git log -p``, ``git show``)."""
        text = self.text
        return "\n@@ -" in text and ("\n+++ " in text or text.startswith("+++ "))

    def parent(self, index: int, floor: int = 0) -> int:
        """The nearest non-blank line above ``index`` that is less indented; -1 when there is
        none at or below line ``floor`` (looked for no further up).

        Found by jumping from parent to parent: the lines between a line and its parent are
        all deeper than it, so a sibling's known parent skips them (memoized per document;
        only parents found are remembered, whatever the floor).
        """
        memo: dict[int, int] = self.__dict__.setdefault("_parents", {})
        # A line with no parent down to line B: nothing in [B, line) is less indented than it.
        clear: dict[int, int] = self.__dict__.setdefault("_clear_down_to", {})
        known = memo.get(index)
        if known is not None:
            return known if known >= floor else -1
        lines = self.lines
        level = self.indent(index)
        at = index - 1
        siblings = [index]
        while at >= floor:
            if not lines[at].strip():
                at -= 1
                continue
            own = self.indent(at)
            if own < level:
                for sibling in siblings:
                    memo[sibling] = at
                return at
            if own == level:
                siblings.append(at)
            jump = memo.get(at)
            if jump is None:
                jump = clear.get(at, at) - 1
            at = jump
        for sibling in siblings:
            clear[sibling] = min(clear.get(sibling, sibling), max(floor, 0))
        return -1

    def indent(self, index: int) -> int:
        """How deep line ``index`` sits: its leading white space, or its ``tree`` connector.

        In a diff, a line's depth is its code's: read after the ``+``/``-``/`` `` marker.
        """
        memo: dict[int, int] = self.__dict__.setdefault("_indents", {})
        known = memo.get(index)
        if known is None:
            line = self.lines[index]
            known = depth(line[1:] if line[:1] in _DIFF_MARKS and self.diff else line)
            memo[index] = known
        return known


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
