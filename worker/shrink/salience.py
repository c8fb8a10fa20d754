"""Which lines of a tool output matter most: errors, verdicts, exit codes, query matches.

Shared by the fallback truncation (which carries these lines out of the omitted middle) and the
extractive summarizer. Candidate lines are found with plain substring scans over the lower-cased
text (fast on megabytes), and only those candidates are matched against the precise patterns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from tersify.contract import ToolType
from tersify.text.cut import safe_end, safe_start
from tersify.text.sanitize import lowercase
from tersify.text.signals import (
    CODE_FRAME,
    LONG_LINE,
    Kind,
    classify_line,
    is_location_token,
    is_verdict,
)
from tersify.worker.shrink.diversity import shape
from tersify.worker.shrink.lines import LineLocator
from tersify.worker.shrink.matchcounts import top_counts
from tersify.worker.shrink.query import TermWeights, query_terms, weigh_terms
from tersify.worker.shrink.textcut import ELLIPSIS


@dataclass(frozen=True, slots=True)
class Salient:
    """A salient line (or a snippet of a very long one) and how much it matters."""

    number: int
    start: int
    end: int
    text: str
    kind: Kind
    weight: float
    count: int = 1


_LOCATION_ANCHOR = re.compile(r":\d+:(?:\d+|\s)")
# A linter's rule code after a location: "a.py:3:1: E0102:", "a.py:3:1: F821 " (E and F codes
# are errors in pycodestyle, pyflakes and pylint alike; W codes warnings).
_RULE_CODE = re.compile(r":\d+(?::\d+)?:? ([EFW])\d{3,4}\b")
_MAX_RULE_LINES = 20_000
TRACEBACK = "traceback (most recent call last)"
_FRAME = re.compile(r'^\s+File "|^\s+at \S|^\s+\d+: |^\s+in ')

_ANCHORS: dict[ToolType, tuple[str, ...]] = {
    # Each anchor costs one pass over the text: few, short and broad ("err" finds "error",
    # "stderr" and "npm ERR!"); the precise tests run on the lines they find.
    ToolType.COMMAND_OUTPUT: (
        "err", "fail", "warn", "traceback", "exception", "fatal", "panic", "exit", "denied",
        "cannot", "no such", "not found", "abort", "assert",
    ),
    ToolType.SEARCH_RESULTS: ("no such file", "permission denied", "error:"),
    ToolType.DIRECTORY_LISTING: ("cannot", "no such", "denied", "error", "not found"),
}  # fmt: skip
_TAIL_LINES = 60
_LONG_LINE = LONG_LINE
_SNIPPET_BEFORE = 80
_SNIPPET_AFTER = 200
_MAX_QUERY_POSITIONS = 12_000
_MAX_CANDIDATES = 5_000
_MAX_ITEMS = 1_500
# More query lines than ``_MAX_ITEMS`` could not all be kept anyway.
_MAX_QUERY_LINES = _MAX_ITEMS
_TRACE_SCAN = 400
RARE_QUERY = 6.0
RARE_SALIENT = 3.0


def _snippet(text: str, start: int, end: int, pos: int) -> tuple[int, int, str]:
    """The whole line when short, else a window of it around ``pos`` marked with ellipses."""
    if end - start <= _LONG_LINE:
        return start, end, text[start:end]
    lo = safe_start(text, max(start, pos - _SNIPPET_BEFORE))
    hi = safe_end(text, min(end, pos + _SNIPPET_AFTER))
    body = text[lo:hi]
    return lo, hi, (ELLIPSIS if lo > start else "") + body + (ELLIPSIS if hi < end else "")


_POSITIONS_LIMIT = 20_000


def _positions(low: str, needles: tuple[str, ...], limit: int = _POSITIONS_LIMIT) -> list[int]:
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


class _Hits:
    """Positions of needles in one lower-cased text; each needle costs one pass per call.

    The anchors and the query often share a word ("fail", "error"): it is searched once.
    """

    def __init__(self, low: str) -> None:
        self.low = low
        self._found: dict[str, list[int]] = {}

    def of(self, needle: str) -> list[int]:
        """``_positions(low, (needle,))``, computed once."""
        found = self._found.get(needle)
        if found is None:
            found = self._found[needle] = _positions(self.low, (needle,))
        return found

    def count(self, needle: str) -> int:
        """How often ``needle`` occurs (as ``low.count``), from an earlier complete scan if any."""
        found = self._found.get(needle)
        if found is not None and len(found) < _POSITIONS_LIMIT:
            return len(found)
        return self.low.count(needle)

    def known(self, needle: str) -> list[int] | None:
        """The positions of ``needle`` if it was already searched for."""
        return self._found.get(needle)

    def merged(self, needles: tuple[str, ...]) -> list[int]:
        """``_positions(low, needles)``: the positions of all ``needles``, ascending."""
        return sorted(pos for needle in needles for pos in self.of(needle))


def _spread(positions: list[int], limit: int) -> list[int]:
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


def _traceback_lines(text: str, start: int) -> list[tuple[int, int, Kind]]:
    """The last frame and the exception line of the traceback whose header starts at ``start``."""
    pos = text.find("\n", start)
    last_frame: tuple[int, int] | None = None
    for _ in range(_TRACE_SCAN):
        if pos == -1:
            break
        line_start = pos + 1
        pos = text.find("\n", line_start)
        line_end = len(text) if pos == -1 else pos
        line = text[line_start:line_end]
        if not line.strip():
            continue
        if line[0] in " \t":
            if _FRAME.match(line):
                last_frame = (line_start, line_end)
            continue
        found: list[tuple[int, int, Kind]] = []
        if last_frame:
            found.append((*last_frame, Kind.FRAME))
        found.append((line_start, line_end, Kind.ERROR))
        return found
    return []


def find_salient(
    text: str,
    tool_type: ToolType,
    query: str | None = None,
    *,
    low: str | None = None,
    weights: TermWeights | None = None,
) -> list[Salient]:
    """Salient lines of (sanitized) ``text``, identical ones folded, most important first.

    ``weights`` are the query's term weights when the caller has them (``units`` of ``text``).
    """
    low = lowercase(text) if low is None else low
    hits = _Hits(low)
    spans: dict[int, tuple[int, Kind, int]] = {}

    def add(start: int, end: int, kind: Kind, anchor: int) -> None:
        known = spans.get(start)
        if known is None or known[1] < kind:
            spans[start] = (end, kind, anchor)

    locator = LineLocator(text)
    kinds: dict[str, Kind | None] = {}
    line_end = -1
    for pos in _spread(hits.merged(_ANCHORS.get(tool_type, ())), _MAX_CANDIDATES):
        if pos <= line_end:
            continue
        _, line_start, line_end = locator.locate(pos)
        head = text[line_start : min(line_end, line_start + _LONG_LINE)]
        if head not in kinds:
            # Logs repeat themselves: classify each distinct line once.
            kinds[head] = classify_line(head, tool_type)
        kind = kinds[head]
        if kind is not None:
            add(line_start, line_end, kind, pos)
    if tool_type is ToolType.COMMAND_OUTPUT:
        _add_command_lines(text, low, add)
    if tool_type is ToolType.SEARCH_RESULTS:
        # In per-file match counts the biggest ones are what "where is most of it" asks for.
        for start, end in top_counts(text)[:40]:
            add(start, end, Kind.PROBLEM, start)
    return _score(text, hits, spans, query, weights)


def _add_command_lines(text: str, low: str, add: Callable[[int, int, Kind, int], None]) -> None:
    """Traceback frames, bare locations (``--> a.py:3:5``) and the verdicts at the end."""
    locator = LineLocator(text)
    for pos in _positions(low, (TRACEBACK,)):
        _, start, end = locator.locate(pos)
        add(start, end, Kind.FRAME, pos)
        for line_start, line_end, kind in _traceback_lines(text, start):
            add(line_start, line_end, kind, line_start)
    line_end = -1
    for match in _LOCATION_ANCHOR.finditer(text):
        if match.start() <= line_end:
            continue
        _, start, line_end = locator.locate(match.start())
        before = text[max(start, match.start() - 200) : match.start()].split()
        if (
            before
            and is_location_token(before[-1])
            and not CODE_FRAME.match(text[start : match.start()])
        ):
            add(start, line_end, Kind.LOCATION, match.start())
    for count, match in enumerate(_RULE_CODE.finditer(text)):
        if count >= _MAX_RULE_LINES:
            break
        _, start, end = locator.locate(match.start())
        add(start, end, Kind.WARNING if match.group(1) == "W" else Kind.ERROR, match.start())
    _add_tail_verdicts(text, add)


def _add_tail_verdicts(text: str, add: Callable[[int, int, Kind, int], None]) -> None:
    """Verdict lines (test summaries, totals) live at the end: match them there line by line."""
    start = len(text)
    for _ in range(_TAIL_LINES):
        if start <= 0:
            break
        end = start - 1 if text[start - 1] == "\n" else start
        start = text.rfind("\n", 0, end) + 1
        line = text[start : min(end, start + _LONG_LINE)].strip()
        if line and is_verdict(line):
            add(start, end, Kind.VERDICT, start)


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
    return entry.kind + min(2.0, math.log(entry.count)) + 8 * matched


@dataclass(slots=True)
class _Entry:
    start: int
    end: int
    kind: Kind
    anchor: int
    count: int = 1
    # The snippet and its query score when already computed (query lines are scored on sight).
    shown: tuple[int, int, str, float] | None = None


def units_of(text: str) -> int:
    """How many lines a text counts as for term weights (a long line counts as several)."""
    return max(text.count("\n") + 1, len(text) // 120)


def _score(
    text: str,
    hits: _Hits,
    spans: dict[int, tuple[int, Kind, int]],
    query: str | None,
    known: TermWeights | None = None,
) -> list[Salient]:
    """Fold identical lines, add the lines that match the query, weigh everything."""
    low = hits.low
    terms = query_terms(query)
    weights = TermWeights() if known is None else known
    units = units_of(text)
    mean = len(text) / units
    if terms and known is None:
        weights = weigh_terms(terms, low, units, hits.count)
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
    if weights:
        _add_query_lines(text, hits, weights, spans, entries)
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
            lo, hi, shown, q = entry.shown
        else:
            lo, hi, shown = _snippet(text, entry.start, entry.end, entry.anchor)
            q = weights.score(low[lo:hi]) if weights else 0.0
        q *= length_norm(hi - lo, mean)
        # A rare query term (a CVE id, a dotted name found once) marks the line asked about:
        # it outranks the generic errors a log is full of; common terms add little.
        rare = weights.rarity(low[lo:hi], units) if weights and q else 0.0
        if entry.kind is Kind.QUERY:
            base = Kind.QUERY + 8 * q + RARE_QUERY * rare
        else:
            base = entry.kind.value + 3 * q + RARE_SALIENT * rare
        weight = base + min(2.0, math.log(entry.count))
        items.append(Salient(number, lo, hi, shown, entry.kind, weight, entry.count))
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
    hits: _Hits,
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
        q = sum(w for t, w in terms if t in window) / total  # weights.score, total hoisted
        # Keep a line holding a strong term even when the query has many other words.
        if q < 0.2 and not any(w >= strong for t, w in terms if t in window):
            continue
        fold_key = shown.strip()
        entry = entries.get(fold_key)
        if entry is None:
            entries[fold_key] = _Entry(start, end, Kind.QUERY, pos, shown=(lo, hi, shown, q))
        elif entry.start != start:
            entry.count += 1


def _query_positions(hits: _Hits, weights: TermWeights, limit: int) -> list[int]:
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
    rarest = _spread(list(hits.of(informative[0])), limit)
    others: list[int] = []
    for term in informative[1:]:
        more = _find_at_most(hits, term, _MAX_QUERY_POSITIONS - len(rarest) - len(others))
        if more is None:
            break
        others.extend(more)
    others.sort()
    room = limit - len(rarest)
    return sorted(rarest + (_spread(others, room) if room > 0 else []))


def _find_at_most(hits: _Hits, needle: str, most: int) -> list[int] | None:
    """All positions of ``needle``, or None if there are more than ``most``."""
    known = hits.known(needle)
    if known is not None:
        # A complete list unless the search stopped at its limit, far above ``most``.
        return known if len(known) <= most else None
    low = hits.low
    found: list[int] = []
    pos = low.find(needle)
    while pos != -1:
        if len(found) >= most:
            return None
        found.append(pos)
        pos = low.find(needle, pos + len(needle))
    return found
