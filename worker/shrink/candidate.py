"""A candidate: a line worth showing, its worth, and the lines it brings when it is taken."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Candidate:
    """A line worth showing, how much it is worth, and the lines it brings when taken."""

    anchor: int
    weight: float
    snippet: str | None = None  # the anchor's window when the anchor line is very long
    note: str = ""  # shown after the anchor: "(×12 similar)"
    span: tuple[int, int] | None = None  # the lines to show; None: the anchor's record
    record_lines: int = 8  # the longest record read around the anchor
    share: float = 0.25  # the largest share of the room left the whole record may take
    focused: bool = False  # from a block holding most of the query's evidence
