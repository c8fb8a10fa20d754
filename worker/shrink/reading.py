"""A reading: one text read for one tool kind and one query, and the candidates it offers.

What the engine (``engine``) picks from: the salient and query lines (``salience``), folded by
shape with the rare ones raised; the extremes the query asks for (``extremes``); the blocks
holding the query's evidence and the lines of the severity it names (``evidence``); and what is
always kept: the first and last diagnostic and the closing line. Each part is computed once per
reading; their worths are the ranker's (``ranker``, over ``features``), or ``worth``'s (the
rules) when a reading has no ranker.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property

from tersify.contract import ToolType
from tersify.text.signals import Kind
from tersify.worker.shrink.ancestry import header_above
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.evidence import focused_candidates, severity_candidates
from tersify.worker.shrink.extremes import extreme_lines
from tersify.worker.shrink.features import Evidence, rows, shortlist
from tersify.worker.shrink.kinds import ToolKind, kind_of
from tersify.worker.shrink.query import Query
from tersify.worker.shrink.ranker import SHIPPED, Choice, Ranker, chosen
from tersify.worker.shrink.salience import Salient, find_salient, rarity, shape
from tersify.worker.shrink.terms import TermWeights
from tersify.worker.shrink.textcut import ELLIPSIS
from tersify.worker.shrink.worth import (
    CLOSING_WEIGHT,
    EDGE_DIAGNOSTIC_WEIGHT,
    EXTREME_WEIGHT,
    FIELD_BONUS,
    RARE_TERM_WEIGHT,
    SHAPE_RARITY_BONUS,
    Candidate,
    LineFeatures,
    Source,
)

EXTREMES_READ = 60
EXTREMES_SHOWN = 8
_DIAGNOSTIC = (Kind.ERROR, Kind.PROBLEM, Kind.FRAME)
_FIELD_SPLIT = re.compile(r"[\s,;:()\[\]{}\"'=<>|]+")
_PARENT_SCAN = 20


@dataclass
class Reading:
    """One text read for one tool kind and one query: what every pick is chosen from, each
    part computed once (a file's relevant range and its shrink share one).

    With a ``ranker`` every candidate's worth is its learned score (``ranker``); without one,
    the rules' hand-set worths (``worth``).
    """

    doc: Doc
    kind: ToolKind
    query: Query
    ranker: Ranker | None = None

    @staticmethod
    def of(doc: Doc, tool_type: ToolType, query: str | None, ranker: Choice = SHIPPED) -> Reading:
        """``doc`` read for ``tool_type``'s kind and the parsed ``query``, ranked by ``ranker``
        (the shipped one unless said; None: the rules)."""
        return Reading(doc, kind_of(tool_type), Query.parse(query), chosen(ranker))

    @property
    def weights(self) -> TermWeights:
        """The query's term weights over the text (``Doc.weights``)."""
        return self.doc.weights(self.query)

    @cached_property
    def salient(self) -> list[Salient]:
        """The salient and query lines, worthiest first (``salience``)."""
        return find_salient(self.doc, self.kind, self.query)

    @cached_property
    def features(self) -> dict[int, LineFeatures]:
        """Each salient line's features by its index (``worth.LineFeatures``): what a ranker
        fitted to data would weigh instead of ``worth.line_worth``."""
        return {s.number - 1: s.features for s in self.salient if s.features is not None}

    @cached_property
    def evidence(self) -> Evidence:
        """The lines holding each query term (``features.Evidence``)."""
        return Evidence.of(self.doc, self.weights)

    @cached_property
    def candidates(self) -> list[Candidate]:
        """Every line worth showing with its record and worth (see the module docstring);
        with a ranker, also the other lines holding a query term."""
        found = candidates(self)
        if self.ranker is not None:
            taken = {c.anchor for c in found}
            hits = self.evidence.hit_candidates(taken)
            found.extend(Candidate(i, 0.0, source=Source.HIT) for i in hits)
        return found

    def pool(self, extra: Iterable[Candidate] = ()) -> list[Candidate]:
        """The candidates with ``extra``, each weighed by the ranker when there is one."""
        pool = [*self.candidates, *extra]
        if self.ranker is None:
            return pool
        return self.ranked(pool)

    def ranked(self, pool: list[Candidate]) -> list[Candidate]:
        """``pool`` with every finite worth replaced by the ranker's score of its features;
        past the shortlist (``features.shortlist``), below every score, in the rules' order."""
        ranker = self.ranker
        assert ranker is not None
        fixed = [c for c in pool if c.weight == float("inf")]
        scored, rest = shortlist([c for c in pool if c.weight != float("inf")])
        salient = {s.number - 1: s for s in self.salient}
        table = rows(self.doc, self.evidence, scored, salient)
        pairs = zip(scored, table, strict=True)
        ranked = [replace(c, weight=ranker.score(row)) for c, row in pairs]
        floor = min((c.weight for c in ranked), default=0.0) - 1.0
        ranked += [replace(c, weight=floor - k / len(rest)) for k, c in enumerate(rest)]
        return fixed + ranked


def candidates(reading: Reading) -> list[Candidate]:
    """Every line worth showing with its record and worth (see the module docstring)."""
    doc, query = reading.doc, reading.query
    items = reading.salient
    terms = frozenset(t for t in query.terms if len(t) >= 4)
    weights = reading.weights
    rare = frozenset(t for t, w in weights.weights.items() if w >= RARE_TERM_WEIGHT)
    found = _folded(doc, items, terms, rare)
    found.extend(_edges(doc, items))
    found.extend(_extremes(doc, query))
    found.extend(focused_candidates(doc, items, weights))
    found.extend(severity_candidates(doc, query))
    return found


def _extremes(doc: Doc, query: Query) -> list[Candidate]:
    """The lines the query's extreme names (largest, newest, slowest...), ranked by number.

    When the query also names a section (a directory, a heading) the extremes inside it come
    first: "the largest module in email" is not the largest file anywhere.
    """
    want = query.intent
    if want is None:
        return []
    scope = [t for t in query.compounds or query.terms if len(t) >= 4]
    found: list[Candidate] = []
    ranked = extreme_lines(doc, want, top=EXTREMES_READ, terms=query.terms)
    for rank, index in enumerate(ranked):
        weight = EXTREME_WEIGHT - rank * 0.5
        header = header_above(doc, index)
        if header is not None and any(t in doc.lines[header].lower() for t in scope):
            weight += EXTREME_WEIGHT / 2
        found.append(Candidate(index, weight, record_lines=3, source=Source.EXTREME))
    found.sort(key=lambda c: -c.weight)
    return found[:EXTREMES_SHOWN]


def _folded(
    doc: Doc, items: list[Salient], terms: frozenset[str], rare: frozenset[str] = frozenset()
) -> list[Candidate]:
    """Salient lines as candidates; diagnostics of one shape folded, rare shapes raised.

    A query line holding a term as a whole field ("openssl" between spaces, not inside
    "libcurl4-openssl-dev") is raised: it is likely the line named, not one mentioning it.
    A line holding one of the query's ``rare`` terms is never folded into its look-alikes: it
    is the one asked about, and it marks evidence in the middle (``follow_evidence``).
    """
    groups: dict[str, list[Salient]] = {}
    found: list[Candidate] = []
    for item in items:
        low = item.text.lower()
        named = bool(rare) and any(term in low for term in rare)
        if item.kind is Kind.QUERY or named:
            candidate = _candidate(item)
            if terms and not terms.isdisjoint(_FIELD_SPLIT.split(low)):
                candidate.weight += FIELD_BONUS
            candidate.focused = named
            candidate.source = Source.QUERY
            found.append(candidate)
        else:
            # Lines of one shape under parents of different shapes (the locations of two
            # different lint rules) are different things: the parent is part of the key.
            groups.setdefault(_fold_key(doc, item), []).append(item)
    total = sum(len(group) for group in groups.values())
    for group in groups.values():
        best = max(group, key=lambda s: (s.weight, -s.start))
        count = sum(s.count for s in group)
        candidate = _candidate(best)
        candidate.weight += SHAPE_RARITY_BONUS * rarity(len(group), total)
        candidate.note = f" (×{count} similar)" if count > 1 else ""
        candidate.source = Source.SALIENT
        candidate.group = count
        found.append(candidate)
    return found


def _fold_key(doc: Doc, item: Salient) -> str:
    """A salient line's shape, with its parent's shape when it is indented under one."""
    index = item.number - 1
    own = doc.indent(index)
    if own == 0:
        return shape(item.text)
    for i in range(index - 1, max(-1, index - _PARENT_SCAN), -1):
        line = doc.lines[i]
        if line.strip() and doc.indent(i) < own:
            return shape(line) + "\n" + shape(item.text)
    return shape(item.text)


def _candidate(item: Salient) -> Candidate:
    long_line = item.text.startswith(ELLIPSIS) or item.text.endswith(ELLIPSIS)
    return Candidate(item.number - 1, item.weight, snippet=item.text if long_line else None)


def _edges(doc: Doc, items: list[Salient]) -> list[Candidate]:
    """The closing line and the first and last diagnostic: always worth keeping."""
    found: list[Candidate] = []
    last = len(doc) - 1
    while last >= 0 and doc.blank(last):
        last -= 1
    if last >= 0:
        found.append(Candidate(last, CLOSING_WEIGHT, span=(last, last + 1), source=Source.CLOSING))
    diagnostics = sorted((i for i in items if i.kind in _DIAGNOSTIC), key=lambda s: s.start)
    for item in diagnostics[:1] + diagnostics[-1:]:
        candidate = _candidate(item)
        candidate.weight = max(candidate.weight, EDGE_DIAGNOSTIC_WEIGHT)
        candidate.source = Source.EDGE
        found.append(candidate)
    return found
