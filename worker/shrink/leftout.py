"""Where the rest is: a summary's last line maps the largest regions it left out.

The gap markers (``… 361 lines …``) say that lines were left out; the map says which and what
they are, so an agent reads exactly there (``tersify output REF --from 12``) instead of
paging through the whole output::

    [left out: lines 12-372 "=== FAILURES ===" · 400-900 "def parse(text):"]

A run that holds headers is split at each of them; a region is named by the header it
starts with, else by its first non-blank line, cut short. Lines are numbered from 1 as the
output printed them. The regions shown are the largest that fit the room, listed in order.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, replace

from tersify.worker.shrink.engine import Plan, choose
from tersify.worker.shrink.reading import Reading
from tersify.worker.shrink.render import render
from tersify.worker.shrink.textcut import clip

MAP_CHARS = 160
"""The room a map takes at most at the local budgets (a share of it at small ones)."""
MAP_SHARE = 0.08
MIN_REGION = 4
"""Runs of fewer omitted lines are not worth naming: the markers say enough."""
MAX_REGIONS = 4
LABEL_CHARS = 36
_OPEN = "[left out: lines "
_REGION = re.compile(r"(\d+)-(\d+) \"")


@dataclass(frozen=True, slots=True)
class Region:
    """A run of omitted lines ``[start, stop)`` (0-based) and what names it."""

    start: int
    stop: int
    label: str

    def text(self) -> str:
        """The region as the map shows it: 1-based first and last line, its label quoted."""
        return f'{self.start + 1}-{self.stop} "{self.label}"'


def map_room(budget: int) -> int:
    """How much of ``budget`` a summary keeps for its map."""
    return min(MAP_CHARS, int(budget * MAP_SHARE))


def mapped_shrink(reading: Reading, plan: Plan, *, mapped: bool = True) -> str:
    """The engine's shrink (``engine.shrink_lines``) in ``plan.budget`` chars, ending with the
    map of what it left out; ``mapped=False`` (lines that are not the output's own, such as
    reflowed ones) gives the shrink alone."""
    if not mapped:
        return render(reading.doc.lines, choose(reading, plan))
    lines = reading.doc.lines
    shown = choose(reading, replace(plan, budget=plan.budget - map_room(plan.budget)))
    body = render(lines, shown)
    where = region_map(lines, shown, reading.doc.headers, plan.budget - len(body) - 1)
    return f"{body}\n{where}" if where else body


def omitted(lines: list[str], shown: Mapping[int, str]) -> list[tuple[int, int]]:
    """Every run of lines not shown, as ``[start, stop)``, in order."""
    runs: list[tuple[int, int]] = []
    previous = -1
    for index in [*sorted(shown), len(lines)]:
        if index > previous + 1:
            runs.append((previous + 1, index))
        previous = index
    return runs


def sections(runs: list[tuple[int, int]], headers: list[int]) -> list[tuple[int, int]]:
    """``runs`` split where a header starts inside one: each part is one section's lines."""
    parts: list[tuple[int, int]] = []
    for start, stop in runs:
        at = bisect_left(headers, start + 1)
        while at < len(headers) and headers[at] < stop:
            parts.append((start, headers[at]))
            start = headers[at]
            at += 1
        parts.append((start, stop))
    return parts


def _label(lines: list[str], headers: list[int], start: int, stop: int) -> str:
    at = bisect_left(headers, start)
    index = headers[at] if at < len(headers) and headers[at] < stop else None
    if index is None:
        index = next((i for i in range(start, min(stop, start + 50)) if lines[i].strip()), start)
    text = " ".join(lines[index].split()).replace('"', "'")
    return text if len(text) <= LABEL_CHARS else clip(text, LABEL_CHARS, ellipsis=True)


def region_map(lines: list[str], shown: Mapping[int, str], headers: list[int], room: int) -> str:
    """The map of the largest omitted regions within ``room`` chars ("" when none fits)."""
    runs = sections(omitted(lines, shown), headers)
    runs = [run for run in runs if run[1] - run[0] >= MIN_REGION]
    runs.sort(key=lambda run: (run[0] - run[1], run[0]))
    chosen: list[Region] = []
    for start, stop in runs[:MAX_REGIONS]:
        region = Region(start, stop, _label(lines, headers, start, stop))
        trial = render_map(sorted([*chosen, region], key=lambda r: r.start))
        if len(trial) <= room:
            chosen.append(region)
    return render_map(sorted(chosen, key=lambda r: r.start)) if chosen else ""


def render_map(regions: list[Region]) -> str:
    """The map line of ``regions``."""
    return _OPEN + " · ".join(region.text() for region in regions) + "]"


def mapped_lines(summary: str) -> list[tuple[int, int]]:
    """The regions a summary's map names, as 1-based ``(first, last)`` lines (none: no map)."""
    last = summary.rsplit("\n", 1)[-1]
    if not last.startswith(_OPEN):
        return []
    return [(int(a), int(b)) for a, b in _REGION.findall(last)]
