"""An output past one request, read in windows: its numbered lines cut on line boundaries.

A window holds whole lines numbered as the output numbers them (``N|line``, a file's
``N#HH|line``), at most ``limit`` chars with the numbers counted (a line longer than a window
alone is clipped); consecutive windows share up to ``OVERLAP_LINES`` lines, so a record on a
window's edge is read whole by one of them. When all the windows pass the job's ceiling
(``TERSIFY_MODEL_READ_MAX_CHARS``), they are ranked — the densest evidence for the query
first (the salient lines and the engine's candidates for the kind and the query, by worth),
then the head and the tail, then the rest from both ends inwards — and taken in that order
while they fit; the lines of the windows left out are the unread ones, which the summary
names.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from tersify.worker.shrink import ModelView, NumberedLines, Reading, clip

OVERLAP_LINES = 3
"""Lines a window repeats from the one before it."""
OVERLAP_SHARE = 10
"""Repeated lines take at most 1/OVERLAP_SHARE of a window."""


@dataclass(frozen=True, slots=True)
class Window:
    """A stretch of the output's lines one request reads: indices into the source, and the
    numbered text sent."""

    lines: range
    body: str


@dataclass(frozen=True, slots=True)
class WindowPlan:
    """What a job's model requests read of an output: the windows (in the output's order)
    and the runs of lines no window holds (indices into ``source``)."""

    source: NumberedLines
    windows: tuple[Window, ...]
    unread: tuple[range, ...]

    @property
    def chars_sent(self) -> int:
        """The numbered text of every window, added up."""
        return sum(len(window.body) for window in self.windows)

    def view(self, window: Window) -> ModelView:
        """The view one window's answer is checked against: only its own lines were shown."""
        return ModelView(window.body, self.source, frozenset(window.lines), truncated=False)

    def numbers(self, lines: range) -> tuple[int, int]:
        """The first and last line numbers of a run of indices."""
        numbers = self.source.numbers
        return numbers[lines.start], numbers[lines.stop - 1]


def split(source: NumberedLines, limit: int, overlap: int = OVERLAP_LINES) -> list[Window]:
    """Every line of ``source`` in windows of at most ``limit`` chars, in order, each after the
    first repeating up to ``overlap`` lines of the one before (never its first line)."""
    lines, label = source.lines, source.label
    count = len(lines)
    windows: list[Window] = []
    start = 0
    while start < count:
        parts: list[str] = []
        size = -1  # the first line has no newline before it
        stop = start
        while stop < count:
            text = label(stop, lines[stop])
            if size + 1 + len(text) > limit:
                if not parts:  # one line longer than a window: read clipped
                    prefix = len(label(stop, "")) + 1
                    parts.append(label(stop, clip(lines[stop], limit - prefix, ellipsis=True)))
                    stop += 1
                break
            parts.append(text)
            size += 1 + len(text)
            stop += 1
        windows.append(Window(range(start, stop), "\n".join(parts)))
        if stop >= count:
            break
        start = _next_start(source, start, stop, limit, overlap)
    return windows


def _next_start(source: NumberedLines, start: int, stop: int, limit: int, overlap: int) -> int:
    """Where the window after ``start:stop`` starts: up to ``overlap`` lines back, within
    ``limit // OVERLAP_SHARE`` chars, always past ``start``."""
    back = stop
    room = limit // OVERLAP_SHARE
    while back > start + 1 and stop - back < overlap:
        room -= len(source.label(back - 1, source.lines[back - 1])) + 1
        if room < 0:
            break
        back -= 1
    return back


def plan(
    source: NumberedLines,
    reading: Reading | None,
    *,
    limit: int,
    ceiling: int,
    head_share: float = 0.5,
) -> WindowPlan:
    """The windows a job reads of ``source``: all of them within ``ceiling`` chars, else the
    best ranked that fit (``reading`` finds the evidence; None: head and tail only)."""
    windows = split(source, min(limit, ceiling))
    if sum(len(w.body) for w in windows) <= ceiling:
        return WindowPlan(source, tuple(windows), ())
    chosen: list[Window] = []
    used = 0
    for window in ranked(windows, _scores(windows, reading), head_share):
        if used + len(window.body) <= ceiling:
            chosen.append(window)
            used += len(window.body)
    chosen.sort(key=lambda w: w.lines.start)
    return WindowPlan(source, tuple(chosen), unread_runs(len(source.lines), chosen))


def _scores(windows: Sequence[Window], reading: Reading | None) -> list[float]:
    """Each window's evidence: the worth of the salient lines (errors, verdicts, the query's
    matches…) and of the engine's other candidates (focused blocks, extremes) in it."""
    scores = [0.0] * len(windows)
    if reading is None:
        return scores
    starts = [w.lines.start for w in windows]
    anchors = [(item.number - 1, item.weight) for item in reading.salient]
    anchors += [(candidate.anchor, candidate.weight) for candidate in reading.candidates]
    for anchor, weight in anchors:
        at = bisect_right(starts, anchor) - 1
        if at >= 0 and anchor in windows[at].lines:
            scores[at] += max(0.0, weight)
    return scores


def ranked(windows: Sequence[Window], scores: Sequence[float], head_share: float) -> list[Window]:
    """The windows in the order they are read: evidence first (most worth first), then the
    head and the tail, then the rest from both ends inwards (the head's side first when the
    kind leans on its head)."""
    last = len(windows) - 1
    with_evidence = sorted(
        (i for i in range(len(windows)) if scores[i] > 0), key=lambda i: -scores[i]
    )
    edges = [0, last] if head_share >= 0.5 else [last, 0]
    rest = sorted(
        range(len(windows)),
        key=lambda i: (min(i, last - i), i if head_share >= 0.5 else -i),
    )
    order = list(dict.fromkeys([*with_evidence, *edges, *rest]))
    return [windows[i] for i in order]


def unread_runs(count: int, windows: Sequence[Window]) -> tuple[range, ...]:
    """The runs of line indices below ``count`` that no window holds."""
    runs: list[range] = []
    at = 0
    for window in sorted(windows, key=lambda w: w.lines.start):
        if window.lines.start > at:
            runs.append(range(at, window.lines.start))
        at = max(at, window.lines.stop)
    if at < count:
        runs.append(range(at, count))
    return tuple(runs)
