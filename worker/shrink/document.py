"""A text as numbered lines, and everything the shrinks compute once per text.

The shrinks select lines of a ``Doc`` and render them in order. What they read of the whole
text is declared here and computed on first use, once: the lower-cased text, where each needle
occurs in it (``hits``), its header lines, the table it is, each line's depth and parent, the
query's term weights over it. A 2 MB output that needs only a few lookups pays for few.
"""

from __future__ import annotations

from functools import cached_property

from tersify.text.sanitize import lowercase
from tersify.worker.shrink.headers import find_headers
from tersify.worker.shrink.hits import Hits
from tersify.worker.shrink.lines import depth
from tersify.worker.shrink.query import Query
from tersify.worker.shrink.tables import Table, find_table
from tersify.worker.shrink.terms import TermWeights, weigh_terms

__all__ = ["Doc", "Hits"]  # a Doc's ``hits`` are a ``Hits`` (``hits``)

_DIFF_MARKS = frozenset("+- ")


class Doc:
    """A sanitized text split on ``\\n``; line ``i`` is ``lines[i]`` (0-based)."""

    def __init__(self, text: str) -> None:
        self.text = text
        lines = text.split("\n")
        self._parts = len(lines)  # the newlines, plus one
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()  # a final newline ends the last line; it starts no new one
        self.lines = lines if text else []
        self._indents: dict[int, int] = {}
        self._parents: dict[int, int] = {}
        # A line with no parent down to line B: nothing in [B, line) is less indented than it.
        self._clear_down_to: dict[int, int] = {}
        self._weights: dict[tuple[str, ...], TermWeights] = {}

    def __len__(self) -> int:
        return len(self.lines)

    @cached_property
    def low(self) -> str:
        """The text lower-cased, index for index."""
        return lowercase(self.text)

    @cached_property
    def units(self) -> int:
        """How many lines the text counts as for term weights (a long line counts as several)."""
        return max(self._parts, len(self.text) // 120)

    @cached_property
    def hits(self) -> Hits:
        """Where needles occur in ``low`` (each searched for once)."""
        return Hits(self.low)

    @cached_property
    def diff(self) -> bool:
        """Whether the text holds a unified diff (``git diff``, ``git log -p``, ``git show``)."""
        text = self.text
        return "\n@@ -" in text and ("\n+++ " in text or text.startswith("+++ "))

    @cached_property
    def headers(self) -> list[int]:
        """Every header line, in order (``headers``)."""
        return find_headers(self.text, self.lines, Hits(self.text))

    @cached_property
    def table(self) -> Table | None:
        """The table the text is, if it is one (``tables``)."""
        return find_table(self.lines)

    def weights(self, query: Query) -> TermWeights:
        """The query's term weights over this text's lines (computed once per query)."""
        known = self._weights.get(query.terms)
        if known is None:
            known = weigh_terms(query.terms, self.low, self.units, self.hits.count)
            self._weights[query.terms] = known
        return known

    def blank(self, index: int) -> bool:
        """Whether line ``index`` holds nothing but white space."""
        return not self.lines[index].strip()

    def parent(self, index: int, floor: int = 0) -> int:
        """The nearest non-blank line above ``index`` that is less indented; -1 when there is
        none at or below line ``floor`` (looked for no further up).

        Found by jumping from parent to parent: the lines between a line and its parent are
        all deeper than it, so a sibling's known parent skips them (memoized per document;
        only parents found are remembered, whatever the floor).
        """
        memo = self._parents
        clear = self._clear_down_to
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
        memo = self._indents
        known = memo.get(index)
        if known is None:
            line = self.lines[index]
            known = depth(line[1:] if line[:1] in _DIFF_MARKS and self.diff else line)
            memo[index] = known
        return known
