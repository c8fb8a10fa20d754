"""What the learned ranking reads of a candidate line: generic features, never a program's name.

Per line: how much of the query it holds (BM25-like, length-normalized) and how rare its rarest
term is, how much of the query its block holds, whether it holds the rarest term, how far it
is from the nearest line holding a query term, where it sits, how deep, its shape (key-value,
header, table row, a severity as a field, a location, numbers), how many look-alike lines it
has; per candidate: which mechanism offered it and how many lines it brings. ``Evidence`` is
what is computed once per reading (the lines holding each query term); ``FEATURES`` names the
columns ``ranker`` weighs, in order.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tersify.text.signals import Kind
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.lines import newlines_before
from tersify.worker.shrink.salience import Salient, length_norm, shape
from tersify.worker.shrink.terms import TermWeights, rare_share
from tersify.worker.shrink.worth import RARE_TERM_WEIGHT, Candidate, Source

_KEY_VALUE = re.compile(r"\s*[\"']?[\w.@/-]{1,60}[\"']?\s*(?::|=|\s{2,})\s*\S")
_LOCATION = re.compile(r"\s*(?:-->\s*)?[\w.~/\\-]+\.\w{1,8}[:(]\d+")
_FIELD_SEVERITY = re.compile(
    r"(?:^|[\s\[(\"'])(?:error|warning|warn|fail(?:ed|ure)?|fatal|critical)(?=[\]):\"'\s])",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_COLUMNS = re.compile(r"\S(?:\s{2,}|\t)\S")
_BLOCK_REACH = 12
HIT_LINES = 100
"""Lines holding a query term offered to the ranker besides the rules' candidates, at most."""
COMMON_HITS = 3_000
"""A query term found more often is not located line by line (``Evidence``)."""
SHORTLIST = 200
"""The rules' candidates the ranker weighs, at most: the first by the rules' worth (no local
budget shows more; past them the rules' order stands)."""

_KINDS = (Kind.QUERY, Kind.WARNING, Kind.LOCATION, Kind.FRAME, Kind.ERROR, Kind.EXIT, Kind.VERDICT)
_SOURCES = tuple(Source)

FEATURES: tuple[str, ...] = (
    *(f"kind_{kind.name.lower()}" for kind in _KINDS),
    *(f"source_{source.value}" for source in _SOURCES),
    "query",
    "line_match",
    "line_rarity",
    "terms_share",
    "rarest_term",
    "block_match",
    "block_rarity",
    "hit_distance",
    "position",
    "near_start",
    "near_end",
    "depth",
    "length",
    "key_value",
    "header",
    "table_row",
    "columns",
    "severity_field",
    "location",
    "numbers",
    "digit_share",
    "look_alikes",
    "repeats",
    "record_lines",
    "focused",
    "rule_rank",
    "rule_top",
    "match_rank",
    "block_rank",
)


_MATCH = FEATURES.index("line_match")
_BLOCK = FEATURES.index("block_match")
_TOP = 12
"""The rules' first picks: about what a local budget holds."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where the query's terms sit in one text: each term's lines, and all of them together."""

    weights: TermWeights
    term_lines: dict[str, list[int]]
    hit_lines: list[int]
    rarest: str | None

    @staticmethod
    def of(doc: Doc, weights: TermWeights) -> Evidence:
        """The lines of ``doc`` holding each weighed query term; a term found more than
        ``COMMON_HITS`` times is left out (it tells lines apart no better than its weight)."""
        term_lines: dict[str, list[int]] = {}
        for term in weights.weights:
            if doc.hits.count(term) > COMMON_HITS:
                continue
            places = doc.hits.of(term)
            term_lines[term] = sorted(set(newlines_before(doc.text, places)))
        hit_lines = sorted({i for lines in term_lines.values() for i in lines})
        rarest = max(weights.weights, key=lambda t: weights.weights[t], default=None)
        return Evidence(weights, term_lines, hit_lines, rarest)

    def terms_in(self, start: int, stop: int) -> list[str]:
        """The query terms found on lines ``[start, stop)``."""
        found = []
        for term, lines in self.term_lines.items():
            at = bisect_left(lines, start)
            if at < len(lines) and lines[at] < stop:
                found.append(term)
        return found

    def distance(self, index: int) -> int:
        """How many lines from ``index`` to the nearest line holding a query term (0: on it)."""
        lines = self.hit_lines
        if not lines:
            return -1
        at = bisect_left(lines, index)
        near = [abs(lines[k] - index) for k in (at - 1, at) if 0 <= k < len(lines)]
        return min(near)

    def hit_candidates(self, taken: set[int]) -> list[int]:
        """Lines holding a query term that no rule offered: rarest terms' lines first."""
        found: list[int] = []
        order = sorted(self.term_lines, key=lambda t: -self.weights.weights[t])
        for term in order:
            for index in self.term_lines[term]:
                if index not in taken:
                    taken.add(index)
                    found.append(index)
        return found[:HIT_LINES]


def shortlist(pool: Sequence[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    """The candidates the ranker weighs (the rules' first ``SHORTLIST`` and the lines holding
    a query term), and the rest in the rules' order."""
    hits = [c for c in pool if c.source is Source.HIT]
    ruled = sorted(
        (c for c in pool if c.source is not Source.HIT), key=lambda c: (-c.weight, c.anchor)
    )
    return ruled[:SHORTLIST] + hits[:HIT_LINES], ruled[SHORTLIST:] + hits[HIT_LINES:]


def _block(doc: Doc, index: int) -> tuple[int, int]:
    """The paragraph around line ``index`` (blank lines bound it), at most ``_BLOCK_REACH``
    lines either way."""
    lines = doc.lines
    start = index
    while start > 0 and index - start < _BLOCK_REACH and lines[start - 1].strip():
        start -= 1
    end = index + 1
    while end < len(lines) and end - index < _BLOCK_REACH and lines[end].strip():
        end += 1
    return start, end


def rows(
    doc: Doc,
    evidence: Evidence,
    pool: Sequence[Candidate],
    kinds: dict[int, Salient],
) -> list[list[float]]:
    """One row of ``FEATURES`` per candidate of ``pool``; ``kinds`` holds the salient lines by
    index."""
    weights = evidence.weights
    total = weights.total
    units = doc.units
    mean = len(doc.text) / units if units else 1.0
    headers = set(doc.headers)
    shaped = [shape(doc.lines[c.anchor]) for c in pool]
    shapes = Counter(shaped)
    rare_terms = {t for t, w in weights.weights.items() if w >= RARE_TERM_WEIGHT}
    n_terms = max(1, len(weights.weights))
    found: list[list[float]] = []
    for k, c in enumerate(pool):
        i = c.anchor
        line = doc.lines[i]
        item = kinds.get(i)
        row = [1.0 if item is not None and item.kind is k else 0.0 for k in _KINDS]
        row += [1.0 if c.source is s else 0.0 for s in _SOURCES]
        held = evidence.terms_in(i, i + 1) if total else []
        held_weight = sum(weights.weights[t] for t in held)
        best = max((weights.weights[t] for t in held), default=0.0)
        start, end = _block(doc, i)
        around = evidence.terms_in(start, end) if total else []
        block_best = max((weights.weights[t] for t in around), default=0.0)
        distance = evidence.distance(i)
        span = c.span[1] - c.span[0] if c.span else c.record_lines
        row += [
            1.0 if total else 0.0,
            held_weight / total * length_norm(len(line), mean) if total else 0.0,
            rare_share(best, units),
            len(held) / n_terms,
            1.0 if evidence.rarest in held or bool(rare_terms.intersection(held)) else 0.0,
            sum(weights.weights[t] for t in around) / total if total else 0.0,
            rare_share(block_best, units),
            math.log1p(distance) if distance >= 0 else 5.0,
            *_placed(doc, i, headers),
            math.log1p(shapes[shaped[k]] - 1),
            math.log1p(max(c.group, item.count if item is not None else 1) - 1),
            math.log1p(span),
            1.0 if c.focused else 0.0,
        ]
        found.append(row)
    _add_standing(found, pool)
    return found


def _placed(doc: Doc, i: int, headers: set[int]) -> list[float]:
    """Line ``i``'s features that need no query: where it stands, its depth and length, and
    its shape (key-value, header, table row, columns, a severity field, a location, numbers)."""
    line = doc.lines[i]
    stripped = line.strip()
    count = len(doc)
    table = doc.table
    digits = sum(map(str.isdigit, stripped))
    return [
        i / count if count else 0.0,
        1.0 if i < count * 0.1 else 0.0,
        1.0 if i >= count * 0.9 else 0.0,
        math.log1p(doc.indent(i)),
        math.log1p(len(stripped)),
        1.0 if _KEY_VALUE.match(line) else 0.0,
        1.0 if i in headers else 0.0,
        1.0 if table is not None and i > table.header else 0.0,
        1.0 if _COLUMNS.search(stripped) else 0.0,
        1.0 if _FIELD_SEVERITY.search(line[:200]) else 0.0,
        1.0 if _LOCATION.match(line) else 0.0,
        math.log1p(len(_NUMBER.findall(line[:300]))),
        digits / len(stripped) if stripped else 0.0,
    ]


def _add_standing(found: list[list[float]], pool: Sequence[Candidate]) -> None:
    """Append to each row where its candidate stands among this text's: by the rules' worth,
    and by its line's and its block's share of the query (scores differ in scale from text to
    text)."""
    order = sorted(range(len(pool)), key=lambda k: (-pool[k].weight, pool[k].anchor))
    place = {k: rank for rank, k in enumerate(order)}
    top_match = max((row[_MATCH] for row in found), default=0.0) or 1.0
    top_block = max((row[_BLOCK] for row in found), default=0.0) or 1.0
    for k, row in enumerate(found):
        rank = place[k]
        row += [
            1.0 - rank / len(pool),
            1.0 if rank < _TOP else 0.0,
            row[_MATCH] / top_match,
            row[_BLOCK] / top_block,
        ]
