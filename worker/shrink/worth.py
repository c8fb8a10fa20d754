"""What a line is worth: the hand-set weights of the shrink, all of them, in one place.

A line becomes a ``Candidate`` with a worth; the engine takes candidates, worthiest first,
while they fit. A salient line's worth comes from its ``LineFeatures`` (``line_worth``); the
other candidates (the closing line, an extreme, a focused block, a severity the query names, a
file's definitions) have fixed worths, set against each other here: the closing line above
everything chosen by evidence, evidence above any single line, any single line above an
outline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from tersify.text.signals import Kind

CLOSING_WEIGHT = 100.0
"""The output's last non-blank line."""
EXTREME_WEIGHT = 60.0
"""The most extreme line the query asks for (largest, newest...); each next one half less."""
SEVERITY_WEIGHT = 45.0
"""A line of the severity the query asks for, when such lines are the few."""
EDGE_DIAGNOSTIC_WEIGHT = 40.0
"""The first and the last diagnostic (error, problem, frame) at least."""
FOCUS_WEIGHT = 30.0
"""A focused block's lines: above any single matching line, below the closing line."""
DEFINITION_WEIGHT = 1.5
"""A file's definition line: an outline where room is left."""
FIELD_BONUS = 1.5
"""A query line holding a term as a whole field (the line named, not one mentioning it)."""
SHAPE_RARITY_BONUS = 3.0
"""Added to a folded group's best line, times how rare its shape is (0..1)."""
RARE_TERM_WEIGHT = 3.0
"""A block is focused on only for a query term this rare in it (on about 5 % of lines or
less): a block full of the query's common words is no better than the lines that hold them."""

QUERY_MATCH = 8.0
"""A query line: its share of the query's weight (0..1) times this."""
SALIENT_MATCH = 3.0
"""A salient line (an error, a verdict): its share of the query's weight times this."""
RARE_QUERY = 6.0
"""A query line holding a rare term (a CVE id, a dotted name found once): times its rarity."""
RARE_SALIENT = 3.0
"""A salient line holding a rare query term: times its rarity."""
REPEATS_CAP = 2.0
"""Repeats of a line add the log of their count, at most this."""


@dataclass(frozen=True, slots=True)
class LineFeatures:
    """What is known of one salient line: what it reports, how much of the query it holds,
    how rare the rarest query term in it is, how often it repeats."""

    kind: Kind
    query_match: float  # 0..1, length-normalized
    rarity: float  # 0..1
    count: int = 1


def line_worth(features: LineFeatures) -> float:
    """The worth of a salient line from its features (a linear score, hand-set)."""
    kind, q, rare = features.kind, features.query_match, features.rarity
    if kind is Kind.QUERY:
        base = Kind.QUERY + QUERY_MATCH * q + RARE_QUERY * rare
    else:
        base = kind.value + SALIENT_MATCH * q + RARE_SALIENT * rare
    return base + min(REPEATS_CAP, math.log(features.count))


def first_worth(kind: Kind, count: int, query_match: float) -> float:
    """A first guess of a line's worth, before its query rarity is read: to pick which of
    thousands of lines are weighed fully."""
    return kind + min(REPEATS_CAP, math.log(count)) + QUERY_MATCH * query_match


class Source(StrEnum):
    """Which mechanism offered a candidate (a feature of the learned ranking, ``ranker``)."""

    SALIENT = "salient"  # a salient line, folded with its look-alikes (``salience``)
    QUERY = "query"  # a line holding the query's terms
    CLOSING = "closing"  # the output's last non-blank line
    EDGE = "edge"  # the first or the last diagnostic
    EXTREME = "extreme"  # a line the query's extreme names (``extremes``)
    FOCUS = "focus"  # a line of a focused block (``focus``)
    SEVERITY = "severity"  # a line of the severity the query names (``severity``)
    HIT = "hit"  # any other line holding a query term: offered to the ranker only
    OTHER = "other"  # offered by a caller (a file's definitions)


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
    source: Source = Source.OTHER
    group: int = 1  # how many look-alike salient lines it stands for
