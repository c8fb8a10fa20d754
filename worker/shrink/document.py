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
from tersify.worker.shrink.lines import depth
from tersify.worker.shrink.query import Query
from tersify.worker.shrink.tables import Table, find_table
from tersify.worker.shrink.terms import TermWeights, weigh_terms

_DIFF_MARKS = frozenset("+- ")
POSITIONS_LIMIT = 20_000
"""Hits of one needle found one by one; past this a flood is sampled (``positions``)."""


def positions(low: str, needles: tuple[str, ...], limit: int = POSITIONS_LIMIT) -> list[int]:
    """Positions of the needles in ``low``, ascending, at most about ``2 * limit`` per needle.

    Past ``limit`` hits a needle is sampled at an even stride over the rest of the text, so a
    flood costs bounded work and still covers the whole output.
    """
    found: list[int] = []
    stride = len(low) // limit + 1
    for needle in needles:
        pos = low.find(needle)
        seen = 0
        while pos != -1:
            found.append(pos)
            seen += 1
            # Past the limit, jump ahead between hits so the sample covers the rest evenly.
            pos = low.find(needle, pos + (len(needle) if seen < limit else stride))
    found.sort()
    return found


def spread(positions: list[int], limit: int) -> list[int]:
    """At most about ``limit`` positions: all of the first and last tenth, an even spread between.

    A flood of error lines (a 2 MB lint run) would otherwise cost seconds; the folded counts
    then undercount, but the lines that differ still surface.
    """
    if len(positions) <= limit:
        return positions
    edge = limit // 10
    middle = positions[edge : len(positions) - edge]
    tail = positions[len(positions) - edge :]
    return positions[:edge] + middle[:: len(middle) // (limit - 2 * edge) + 1] + tail


def _borderless(word: str) -> bool:
    """Whether no proper start of ``word`` is also its end: two occurrences cannot overlap."""
    return all(word[:k] != word[-k:] for k in range(1, len(word)))


class Hits:
    """Where needles occur in one lower-cased text; each needle is searched for once.

    The salient words of a tool kind and the query often share a word ("fail", "error"),
    and every part of one shrink reads the same text: a needle costs one pass per text.
    """

    def __init__(self, low: str) -> None:
        self.low = low
        self._found: dict[str, list[int]] = {}
        self._counts: dict[str, int] = {}

    def of(self, needle: str) -> list[int]:
        """``positions(low, (needle,))``, computed once: read off the positions of a word it
        starts with when those are all known (a traceback's header off "traceback")."""
        found = self._found.get(needle)
        if found is None:
            found = self._derived(needle)
            if found is None:
                found = positions(self.low, (needle,))
            self._found[needle] = found
        return found

    def _derived(self, needle: str) -> list[int] | None:
        """Where ``needle`` occurs, from a known complete list of a prefix of it; None if none.

        Exact when neither can overlap itself: every occurrence of ``needle`` is then one of
        its prefix's, and the scans found every occurrence of both.
        """
        if not _borderless(needle):
            return None
        low = self.low
        for prefix, places in self._found.items():
            if (
                len(places) < POSITIONS_LIMIT
                and needle.startswith(prefix)
                and len(prefix) < len(needle)
                and _borderless(prefix)
            ):
                return [at for at in places if low.startswith(needle, at)]
        return None

    def count(self, needle: str) -> int:
        """How often ``needle`` occurs (as ``low.count``), counted once: from an earlier
        complete scan if any."""
        known = self._counts.get(needle)
        if known is None:
            found = self._found.get(needle)
            if found is not None and len(found) < POSITIONS_LIMIT:
                known = len(found)  # a complete scan: every occurrence is in it
            else:
                known = self.low.count(needle)
            self._counts[needle] = known
        return known

    def known(self, needle: str) -> list[int] | None:
        """The positions of ``needle`` if it was already searched for."""
        return self._found.get(needle)

    def merged(self, needles: tuple[str, ...]) -> list[int]:
        """``positions(low, needles)``: the positions of all ``needles``, ascending."""
        return sorted(pos for needle in needles for pos in self.of(needle))


class Doc:
    """A sanitized text split on ``\\n``; line ``i`` is ``lines[i]`` (0-based)."""

    def __init__(self, text: str) -> None:
        self.text = text
        lines = text.split("\n")
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
        return max(self.text.count("\n") + 1, len(self.text) // 120)

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
        return find_headers(self.text, self.lines)

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
