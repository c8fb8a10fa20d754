"""Rendering chosen lines in order, with no silent gap: every run of left-out lines is counted.

A run of omitted lines shows as one marker line, ``… 12 lines …`` (``… 1 line …``), at the
start, between chosen lines and at the end alike; a single blank line is shown as itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tersify.worker.shrink.textcut import ELLIPSIS


def gap_marker(count: int) -> str:
    """The line that stands for ``count`` omitted lines."""
    return f"{ELLIPSIS} {count} line{'s' if count != 1 else ''} {ELLIPSIS}"


MARKER_COST = len(gap_marker(10_000)) + 1
"""What one marker line costs at most, newline included (for estimates before rendering)."""


def render(
    lines: list[str],
    shown: Mapping[int, str],
    *,
    numbered: Callable[[int, str], str] | None = None,
    start: int = 0,
    stop: int | None = None,
) -> str:
    """The ``shown`` lines (index → text) of ``lines[start:stop]`` in order, gaps marked."""
    stop = len(lines) if stop is None else stop
    out: list[str] = []
    previous = start - 1
    for index in sorted(i for i in shown if start <= i < stop):
        _gap(out, lines, previous + 1, index)
        text = shown[index]
        out.append(numbered(index, text) if numbered is not None else text)
        previous = index
    _gap(out, lines, previous + 1, stop)
    return "\n".join(out)


def _gap(out: list[str], lines: list[str], start: int, stop: int) -> None:
    count = stop - start
    if count <= 0:
        return
    if count == 1 and not lines[start].strip():
        out.append("")
    else:
        out.append(gap_marker(count))


def rendered_size(lines: list[str], shown: Mapping[int, str], extra: Mapping[int, int]) -> int:
    """``len(render(...))`` without building it; ``extra`` adds chars per line (prefixes)."""
    total = 0
    parts = 0
    previous = -1
    for index in sorted(shown):
        total, parts = _gap_size(lines, previous + 1, index, total, parts)
        total += len(shown[index]) + extra.get(index, 0)
        parts += 1
        previous = index
    total, parts = _gap_size(lines, previous + 1, len(lines), total, parts)
    return total + max(0, parts - 1)


def _gap_size(lines: list[str], start: int, stop: int, total: int, parts: int) -> tuple[int, int]:
    count = stop - start
    if count <= 0:
        return total, parts
    if count == 1 and not lines[start].strip():
        return total, parts + 1
    return total + len(gap_marker(count)), parts + 1
