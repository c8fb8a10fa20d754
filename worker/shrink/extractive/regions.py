"""Score the lines of a text against the query and pick the densest windows of them."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from producer.classify.sanitize import lowercase
from worker.shrink.query import TermWeights, query_terms, weigh_terms

_MAX_POSITIONS = 30_000


def line_scores(
    text: str, query: str | None, *, demote: frozenset[str] = frozenset()
) -> dict[int, float]:
    """0-based line index -> how well that line matches the query (rarer terms weigh more).

    ``demote`` terms count little: inside a file, the words of its own name say nothing.
    """
    terms = query_terms(query)
    if not terms:
        return {}
    low = lowercase(text)
    weights = weigh_terms(terms, low, text.count("\n") + 1).demoted(demote)
    if not weights:
        return {}
    return _scores(text, low, weights)


def _scores(text: str, low: str, weights: TermWeights) -> dict[int, float]:
    positions: list[tuple[int, str]] = []
    for term, weight in weights.weights.items():
        if weight <= 0.1 and len(weights.weights) > 1:
            continue
        pos = low.find(term)
        while pos != -1 and len(positions) < _MAX_POSITIONS:
            positions.append((pos, term))
            pos = low.find(term, pos + len(term))
    positions.sort()
    weight_of = weights.weights.__getitem__
    total = weights.total
    scores: dict[int, float] = {}
    # Hits ascend, so one line's hits come together: tally them, score the line when the next
    # line's hits begin. Line numbers grow by the newlines between one line's end and a hit.
    index, line_end = 0, _line_end(text, 0)
    terms: set[str] = set()
    extra = 0
    for pos, term in positions:
        if pos > line_end:
            if terms:
                scores[index] = _line_score(weight_of, terms, extra, total)
            index += text.count("\n", line_end, pos)
            line_end = _line_end(text, pos)
            terms, extra = set(), 0
        if term in terms:
            extra += 1
        terms.add(term)
    if terms:
        scores[index] = _line_score(weight_of, terms, extra, total)
    return scores


def _line_score(
    weight_of: Callable[[str], float], terms: set[str], extra: int, total: float
) -> float:
    """The share of the query's weight on a line, plus a little for terms repeated on it."""
    return (sum(map(weight_of, terms)) / total) + 0.05 * min(extra, 4)


def _line_end(text: str, pos: int) -> int:
    """The end (before the newline) of the line holding ``pos``."""
    end = text.find("\n", pos)
    return len(text) if end == -1 else end


@dataclass(frozen=True, slots=True)
class Window:
    """Lines ``[start, end)`` around a strong match, with the definition that owns them."""

    start: int
    end: int
    owner: int | None = None


def best_windows(
    scores: dict[int, float],
    lengths: list[int],
    room: int,
    *,
    before: int = 2,
    after: int = 8,
    owner_of: Callable[[int], int] | None = None,
) -> list[Window]:
    """Non-overlapping windows around the best-matching lines that fit in ``room`` chars.

    A window spans ``before`` lines above its peak line to ``after`` lines below; the definition
    that owns the peak (``owner_of``) is shown with it even when it sits further up. No window
    takes more than about half the room, so several matches get a place.
    """
    if not scores or room <= 0:
        return []
    hits = sorted(scores)
    sums = list(accumulate((scores[i] for i in hits), initial=0.0))
    costs = list(accumulate((n + 8 for n in lengths), initial=0))
    widest = max(room // 2, 200)

    def window_score(start: int, end: int, peak: int) -> float:
        return sums[bisect_left(hits, end)] - sums[bisect_left(hits, start)] + 4 * scores[peak]

    candidates: list[tuple[float, int, int, int]] = []
    for peak in sorted(scores, key=lambda i: -scores[i])[:60]:
        start = max(0, peak - before)
        end = min(len(lengths), peak + after + 1)
        owner = owner_of(peak) if owner_of is not None else peak
        if start > owner >= start - before - 2:
            start = owner
        while end > peak + 2 and costs[end] - costs[start] > widest:
            end -= 1
        candidates.append((window_score(start, end, peak), peak, start, end))
    candidates.sort(key=lambda c: (-c[0], c[2]))
    chosen: list[Window] = []
    for _, peak, start, end in candidates:
        if any(start < w.end and w.start < end for w in chosen):
            continue
        above = owner_of(peak) if owner_of is not None else start
        shown_owner = above if above < start else None
        extra = lengths[above] + 12 if shown_owner is not None else 0
        while start < peak and costs[end] - costs[start] + extra > room:
            start += 1
        cost = costs[end] - costs[start] + extra
        if cost > room:
            continue
        chosen.append(Window(start, end, shown_owner))
        room -= cost
        if room < 60:
            break
    return sorted(chosen, key=lambda w: w.start)
