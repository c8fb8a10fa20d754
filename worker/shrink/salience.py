"""Which lines of a tool output matter most: errors, verdicts, exit codes, query matches.

Shared by the fallback truncation (which carries these lines out of the omitted middle) and the
extractive summarizer. Candidate lines are found with plain substring scans over the lower-cased
text (``Doc.hits``: fast on megabytes, each word searched for once per text), and only those
candidates are matched against the precise patterns; a tool kind adds its own scans. Identical
lines fold into one with a count, and each line's features give its worth (``worth``).

Diversity: many lines of one shape collapse to one with a count, so rare lines survive. A
line's shape is what stays when its leading location, numbers, hashes and quoted names are
taken out: 300 ``unused variable `x12` `` errors share one shape; the one ``mismatched types``
among them has its own, and the rarer a shape, the more it is worth showing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from tersify.text.cut import safe_end, safe_start
from tersify.text.signals import LONG_LINE, Kind, classify_line
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.hits import POSITIONS_LIMIT, Hits, spread
from tersify.worker.shrink.kinds import ToolKind
from tersify.worker.shrink.lines import LineLocator
from tersify.worker.shrink.query import Query
from tersify.worker.shrink.terms import TermWeights, rare_share
from tersify.worker.shrink.textcut import ELLIPSIS
from tersify.worker.shrink.worth import LineFeatures, first_worth, line_worth


@dataclass(slots=True)  # not frozen: built by the thousand per text, six times cheaper so
class Salient:
    """A salient line (or a snippet of a very long one) and how much it matters."""

    number: int
    start: int
    end: int
    text: str
    kind: Kind
    weight: float
    count: int = 1
    features: LineFeatures | None = None


_LONG_LINE = LONG_LINE
_SNIPPET_BEFORE = 80
_SNIPPET_AFTER = 200
_MAX_QUERY_POSITIONS = 12_000
_MAX_CANDIDATES = 5_000
_MAX_ITEMS = 1_500
# More query lines than ``_MAX_ITEMS`` could not all be kept anyway.
_MAX_QUERY_LINES = _MAX_ITEMS
_QUOTED = re.compile(r"'[^'\n]{0,120}'|\"[^\"\n]{0,120}\"|`[^`\n]{0,120}`|‘[^’\n]{0,120}’")
_HEX = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{6,}\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_SPACE = re.compile(r"\s+")
# The location a diagnostic starts with ("src/a.py:12:5: ", "  --> a.rs:3:1"): where, not what.
_LOCATION = re.compile(r"^\s*(?:-->\s*)?(?:[\w.~/\\-]+)?:\d+(?::\d+)?:?\s*")
_SHAPE_CHARS = 72


def shape(line: str) -> str:
    """The line with what varies between repeats of it replaced: its shape."""
    text = _LOCATION.sub("", line.strip()[:400], count=1) or line.strip()[:400]
    text = _QUOTED.sub("'…'", text)
    text = _HEX.sub("#", text)
    text = _NUMBER.sub("#", text)
    return _SPACE.sub(" ", text)[:_SHAPE_CHARS]


def rarity(count: int, total: int) -> float:
    """How much rarer than its fellows a shape of ``count`` lines among ``total`` is (0..1)."""
    if total <= 1 or count >= total:
        return 0.0
    return max(0.0, min(1.0, math.log(total / count) / math.log(max(total, 2))))


def _snippet(text: str, start: int, end: int, pos: int) -> tuple[int, int, str]:
    """The whole line when short, else a window of it around ``pos`` marked with ellipses."""
    if end - start <= _LONG_LINE:
        return start, end, text[start:end]
    lo = safe_start(text, max(start, pos - _SNIPPET_BEFORE))
    hi = safe_end(text, min(end, pos + _SNIPPET_AFTER))
    body = text[lo:hi]
    return lo, hi, (ELLIPSIS if lo > start else "") + body + (ELLIPSIS if hi < end else "")


def find_salient(doc: Doc, kind: ToolKind, query: Query) -> list[Salient]:
    """Salient lines of ``doc`` (sanitized), identical ones folded, most important first."""
    text = doc.text
    hits = doc.hits
    spans: dict[int, tuple[int, Kind, int]] = {}

    def add(start: int, end: int, line_kind: Kind, anchor: int) -> None:
        known = spans.get(start)
        if known is None or known[1] < line_kind:
            spans[start] = (end, line_kind, anchor)

    locator = LineLocator(text)
    kinds: dict[str, Kind | None] = {}
    line_end = -1
    for pos in spread(hits.merged(kind.anchors), _MAX_CANDIDATES):
        if pos <= line_end:
            continue
        _, line_start, line_end = locator.locate(pos)
        head = text[line_start : min(line_end, line_start + _LONG_LINE)]
        if head not in kinds:
            # Logs repeat themselves: classify each distinct line once.
            kinds[head] = classify_line(head, kind.tool_type)
        found = kinds[head]
        if found is not None:
            add(line_start, line_end, found, pos)
    for scan in kind.scans:
        scan(doc, add)
    return _score(doc, spans, doc.weights(query))


def _diverse(text: str, entries: list[_Entry], limit: int) -> list[_Entry]:
    """At most ``limit`` entries, the likeliest first, every shape of line represented.

    No caller shows more than a few hundred lines, so only these are weighed fully; taking
    them shape by shape, rarest shapes first, keeps the one different error among thousands
    of repeats of another.
    """
    groups: dict[str, list[_Entry]] = {}
    for entry in sorted(entries, key=lambda e: (-_likely(e), e.start)):
        line = text[entry.start : min(entry.end, entry.start + _LONG_LINE)]
        groups.setdefault(shape(line), []).append(entry)
    ordered = sorted(groups.values(), key=len)
    kept: list[_Entry] = []
    for rank in range(max(len(group) for group in ordered)):
        for group in ordered:
            if rank < len(group):
                kept.append(group[rank])
                if len(kept) >= limit:
                    return kept
    return kept


def _likely(entry: _Entry) -> float:
    """A first weight: the line's kind, its repeats and, for a query line, its match."""
    matched = entry.shown[3] if entry.shown is not None else 0.0
    return first_worth(entry.kind, entry.count, matched)


@dataclass(slots=True)
class _Entry:
    start: int
    end: int
    kind: Kind
    anchor: int
    count: int = 1
    # The snippet, its query score and its heaviest term's weight when already computed
    # (query lines are scored on sight).
    shown: tuple[int, int, str, float, float] | None = None


def _score(
    doc: Doc, spans: dict[int, tuple[int, Kind, int]], weights: TermWeights
) -> list[Salient]:
    """Fold identical lines, add the lines that match the query, weigh everything."""
    text, low = doc.text, doc.low
    units = doc.units
    mean = len(text) / units
    entries: dict[str, _Entry] = {}
    for start in sorted(spans):
        end, kind, anchor = spans[start]
        key = text[start : min(end, start + _LONG_LINE)].strip()
        entry = entries.get(key)
        if entry is None:
            entries[key] = _Entry(start, end, kind, anchor)
        else:
            entry.count += 1
            entry.kind = max(entry.kind, kind)
    weighed = bool(weights)
    if weighed:
        _add_query_lines(text, doc.hits, weights, spans, entries)
    kept = list(entries.values())
    if len(kept) > _MAX_ITEMS:
        kept = _diverse(text, kept, _MAX_ITEMS)
    items: list[Salient] = []
    number, counted = 1, 0
    for entry in sorted(kept, key=lambda e: e.start):
        # Starts ascend: the line number grows by the newlines since the previous entry.
        number += text.count("\n", counted, entry.start)
        counted = entry.start
        if entry.shown is not None:
            lo, hi, shown, q, best = entry.shown
        else:
            lo, hi, shown = _snippet(text, entry.start, entry.end, entry.anchor)
            held, best = weights.held(low[lo:hi]) if weighed else (0.0, 0.0)
            q = held / weights.total if weighed else 0.0
        q *= length_norm(hi - lo, mean)
        # A rare query term (a CVE id, a dotted name found once) marks the line asked about:
        # it outranks the generic errors a log is full of; common terms add little.
        rare = rare_share(best, units) if weighed and q else 0.0
        features = LineFeatures(entry.kind, q, rare, entry.count)
        weight = line_worth(features)
        items.append(Salient(number, lo, hi, shown, entry.kind, weight, entry.count, features))
    items.sort(key=lambda s: (-s.weight, s.start))
    return items


BM25_K1 = 1.2
BM25_B = 0.75


def length_norm(length: int, mean: float) -> float:
    """BM25's length normalization of one match (term frequency 1), scaled to 1 at the mean
    line length: a short line holding a term (a setting, a term being defined, a heading)
    outranks a long line of prose that mentions it."""
    ratio = length / mean if mean > 0 else 1.0
    return (1.0 + BM25_K1) / (1.0 + BM25_K1 * (1.0 - BM25_B + BM25_B * ratio))


def _add_query_lines(
    text: str,
    hits: Hits,
    weights: TermWeights,
    spans: dict[int, tuple[int, Kind, int]],
    entries: dict[str, _Entry],
) -> None:
    """Lines (or windows of very long lines) holding the query's informative terms."""
    low = hits.low
    terms = list(weights.weights.items())
    total = weights.total
    strong = max(weights.weights.values()) * 0.35
    seen: set[tuple[int, int]] = set()
    start, end, long_line = 0, -1, False
    # An unselective query: look at an even spread of its hits rather than the first ones.
    for pos in _query_positions(hits, weights, _MAX_QUERY_LINES):
        if pos > end:
            # Positions ascend: the line holding ``pos`` starts after the previous line's end.
            start = text.rfind("\n", max(end, 0), pos) + 1
            end = text.find("\n", pos)
            if end == -1:
                end = len(text)
            long_line = end - start > _LONG_LINE
            if not long_line and start in spans:
                continue
        elif not long_line:
            continue  # a short line is looked at once, at its first hit
        if long_line:
            # A very long line is looked at once per stretch of it.
            key = (start, pos // _LONG_LINE)
            if key in seen:
                continue
            seen.add(key)
        lo, hi, shown = _snippet(text, start, end, pos)
        window = low[lo:hi]
        found = [w for t, w in terms if t in window]  # weights.held, the items hoisted
        q = sum(found) / total
        best = max(found, default=0.0)
        # Keep a line holding a strong term even when the query has many other words.
        if q < 0.2 and best < strong:
            continue
        fold_key = shown.strip()
        entry = entries.get(fold_key)
        if entry is None:
            entries[fold_key] = _Entry(start, end, Kind.QUERY, pos, shown=(lo, hi, shown, q, best))
        elif entry.start != start:
            entry.count += 1


def _query_positions(hits: Hits, weights: TermWeights, limit: int) -> list[int]:
    """Positions of the informative query terms in ``low``, ascending, about ``limit`` of them.

    Rarest terms first; terms stop being added once their hits would swamp the scan (a line
    holding a frequent term and a rare one is found through the rare one anyway). The weights
    are inverse frequencies, so the heaviest term is the rarest, and a term's hits are only
    collected up to the room left: a frequent term costs no more than the cap. Every hit of
    the rarest term is kept; the others are spread evenly over what room is left.
    """
    informative = [t for t, w in weights.weights.items() if w > 0.1]
    informative.sort(key=lambda t: -weights.weights[t])
    if not informative:
        return []
    # The rarest term always counts, however often it occurs.
    rarest = spread(list(hits.of(informative[0])), limit)
    others: list[int] = []
    for term in informative[1:]:
        more = _find_at_most(hits, term, _MAX_QUERY_POSITIONS - len(rarest) - len(others))
        if more is None:
            break
        others.extend(more)
    others.sort()
    room = limit - len(rarest)
    return sorted(rarest + (spread(others, room) if room > 0 else []))


def _find_at_most(hits: Hits, needle: str, most: int) -> list[int] | None:
    """All positions of ``needle``, or None if there are more than ``most``."""
    known = hits.known(needle)
    if known is not None:
        # A complete list unless the search stopped at its limit, far above ``most``.
        return known if len(known) <= most else None
    if hits.count(needle) > most:  # counted once per text, at C speed
        return None
    if most < POSITIONS_LIMIT:
        return hits.of(needle)  # every occurrence: there are fewer than the search samples at
    low = hits.low
    found: list[int] = []
    pos = low.find(needle)
    while pos != -1:
        if len(found) >= most:
            return None
        found.append(pos)
        pos = low.find(needle, pos + len(needle))
    return found
