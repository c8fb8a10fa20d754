"""An output past one request, read in windows: its numbered lines cut on line boundaries.

A window holds whole lines numbered as the output numbers them (``N|line``, a file's
``N#HH|line``), at most ``limit`` chars with the numbers counted (a line longer than a window
alone is clipped); consecutive windows share up to ``OVERLAP_LINES`` lines, so a record on a
window's edge is read whole by one of them. When all the windows would pass the job's ceiling
(``TERSIFY_MODEL_READ_MAX_CHARS``), the engine picks what they hold, as it picks a model's
view of an output past one request (``views.model_view``) but with the ceiling for
its budget: the query's evidence first, the head and the tail, the salient records with their
ancestry; the picked lines, each run left out marked ``… N lines …``, are cut into windows, and
the lines no window holds are the unread ones, which the summary names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tersify.worker.shrink.engine import choose
from tersify.worker.shrink.quotes import NumberedLines
from tersify.worker.shrink.reading import Reading
from tersify.worker.shrink.render import gap_marker
from tersify.worker.shrink.textcut import clip
from tersify.worker.shrink.views import ModelView, model_plan

OVERLAP_LINES = 8
"""Lines a window repeats from the one before it (when windows read every line)."""
OVERLAP_SHARE = 10
"""Repeated lines take at most 1/OVERLAP_SHARE of a window."""
MARKER_ROOM = 24
"""What a ``… N lines …`` marker between picked lines costs at most."""


@dataclass(frozen=True, slots=True)
class Window:
    """A stretch of the output's lines one request reads: the stretch (indices into the
    source), the lines of it shown, and the numbered text sent."""

    lines: range
    shown: frozenset[int]
    body: str


@dataclass(frozen=True, slots=True)
class WindowPlan:
    """What a job's model requests read of an output: the windows (in the output's order)
    and the runs of lines no window shows (indices into ``source``)."""

    source: NumberedLines
    windows: tuple[Window, ...]
    unread: tuple[range, ...]

    @property
    def chars_sent(self) -> int:
        """The numbered text of every window, added up."""
        return sum(len(window.body) for window in self.windows)

    def view(self, window: Window) -> ModelView:
        """The view one window's answer is checked against: only its own lines were shown."""
        gaps = len(window.shown) < len(window.lines)
        return ModelView(window.body, self.source, window.shown, truncated=gaps)

    def numbers(self, lines: range) -> tuple[int, int]:
        """The first and last line numbers of a run of indices."""
        numbers = self.source.numbers
        return numbers[lines.start], numbers[lines.stop - 1]


def split(
    source: NumberedLines,
    limit: int,
    overlap: int = OVERLAP_LINES,
    picked: Mapping[int, str] | None = None,
) -> list[Window]:
    """The lines of ``source`` (``picked``: only those, as the engine shows them) in windows
    of at most ``limit`` chars, in order; when every line is read, each window after the first
    repeats up to ``overlap`` lines of the one before (never its first line)."""
    lines, label = source.lines, source.label
    order = list(range(len(lines))) if picked is None else sorted(picked)
    texts: Mapping[int, str] | list[str] = lines if picked is None else picked
    costs = [len(label(i, texts[i])) + 1 for i in order]
    repeated = (
        0 if picked is not None or not costs else min(limit // OVERLAP_SHARE, overlap * max(costs))
    )
    limit = balanced(limit, costs, repeated)
    windows: list[Window] = []
    first = 0
    while first < len(order):
        parts: list[str] = []
        size = -1  # the first line has no newline before it
        stop = first
        while stop < len(order):
            index = order[stop]
            text = label(index, texts[index])
            gap = stop > first and order[stop - 1] != index - 1
            marker = gap_marker(index - order[stop - 1] - 1) if gap else ""
            cost = 1 + len(text) + (1 + len(marker) if gap else 0)
            if size + cost > limit:
                if not parts:  # one line longer than a window: read clipped
                    prefix = len(label(index, "")) + 1
                    parts.append(label(index, clip(texts[index], limit - prefix, ellipsis=True)))
                    stop += 1
                break
            if gap:
                parts.append(marker)
            parts.append(text)
            size += cost
            stop += 1
        held = order[first:stop]
        windows.append(Window(range(held[0], held[-1] + 1), frozenset(held), "\n".join(parts)))
        if stop >= len(order):
            break
        first = stop if picked is not None else _next_start(source, first, stop, limit, overlap)
    return windows


def balanced(limit: int, costs: Sequence[int], overlap_room: int = 0) -> int:
    """A window size at most ``limit`` that shares ``costs`` out evenly, no window a sliver:
    greedy filling at this size needs no more windows than the count it is made for (each
    window after the first may repeat ``overlap_room`` chars of the one before)."""
    total = sum(costs)
    if total <= limit:
        return limit
    biggest = min(limit, max(costs))
    count = -(-total // limit)
    while True:
        size = -(-total // count) + biggest + overlap_room + MARKER_ROOM
        if size <= limit or count >= len(costs):
            return min(limit, size)
        count += 1


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


def plan(source: NumberedLines, reading: Reading, *, limit: int, ceiling: int) -> WindowPlan:
    """The windows a job reads of ``source``: every line within ``ceiling`` chars, else the
    lines the engine picks for ``reading`` with the ceiling as its budget."""
    limit = min(limit, ceiling)
    windows = split(source, limit)
    if sum(len(w.body) for w in windows) <= ceiling:
        return WindowPlan(source, tuple(windows), ())
    picked = choose_lines(reading, ceiling, source)
    windows = split(source, limit, picked=picked)
    return WindowPlan(source, tuple(windows), unread_runs(len(source.lines), windows))


def choose_lines(reading: Reading, ceiling: int, source: NumberedLines) -> dict[int, str]:
    """The lines the engine shows a model within ``ceiling`` chars (index → text as shown)."""
    return choose(reading, model_plan(reading.kind.tool_type, ceiling, source.label))


def unread_runs(count: int, windows: Sequence[Window]) -> tuple[range, ...]:
    """The runs of line indices below ``count`` that no window shows."""
    shown = sorted({i for window in windows for i in window.shown})
    runs: list[range] = []
    at = 0
    for index in shown:
        if index > at:
            runs.append(range(at, index))
        at = index + 1
    if at < count:
        runs.append(range(at, count))
    return tuple(runs)
