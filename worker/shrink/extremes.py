"""Extremes: when the query asks for the largest, newest, slowest or most (``Query.intent``),
rank by the numbers.

Position says nothing about which file is biggest: the lines are read for sizes (``4.0K``,
``12 MB``, the size column of ``ls -l``), dates (ISO, ``ls``'s ``Nov 22 01:54``, git's
``Date:``), durations (``1.23s``, ``250 ms``, ``0:13:32``) or counts, and the top few are kept.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable

from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.query import Intent, Measure
from tersify.worker.shrink.tables import Table

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_HUMAN_SIZE = re.compile(
    r"(?<![\w.])(\d+(?:[.,]\d+)?)\s?([kmgtp]?)(?:i?b|bytes?)?(?![\w.])", re.IGNORECASE
)
_LS_LONG = re.compile(r"[-dlcbpsD][rwxsStT-]{9}[.+@]?\s+\d+\s+\S+\s+(?:\S+\s+)?(\d+)\s")
_DU = re.compile(r"(\d+(?:[.,]\d+)?)([KMGTP]?)\t")
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:[ T](\d\d):(\d\d)(?::(\d\d))?)?")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_DAY = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+(\d{1,2})"
    r"(?:\s+(\d{1,2}):(\d\d)(?::(\d\d))?)?(?:\s+(\d{4}))?",
    re.IGNORECASE,
)
_DURATION = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s?(ms|msec|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)\b"
    r"|\b(\d+):(\d\d):(\d\d)\b",
    re.IGNORECASE,
)
_SECONDS = {"ms": 0.001, "msec": 0.001, "m": 60.0, "h": 3600.0}
_COUNT_EDGE = re.compile(r"^\s*(\d+)\b|[:\s](\d+)\s*$")
_INTEGER = re.compile(r"(?<![\w.])\d+(?![\w.])")


def value(line: str, measure: Measure) -> float | None:
    """The number ``line`` holds for ``measure``, or None when it holds none."""
    if measure is Measure.SIZE:
        return _size(line)
    if measure is Measure.TIME:
        return _time(line)
    if measure is Measure.DURATION:
        return _duration(line)
    return _count(line)


def _size(line: str) -> float | None:
    long_row = _LS_LONG.match(line)
    if long_row:
        return float(long_row.group(1))
    du = _DU.match(line)
    if du:
        return float(du.group(1).replace(",", ".")) * _UNITS[du.group(2).lower()]
    best = None
    for number, unit in _HUMAN_SIZE.findall(line):
        if unit:  # a bare number in prose is no size
            size = float(number.replace(",", ".")) * _UNITS[unit.lower()]
            best = size if best is None else max(best, size)
    return best


def _time(line: str) -> float | None:
    iso = _ISO.search(line)
    if iso:
        parts = [int(p) if p else 0 for p in iso.groups()]
        return float("".join(f"{p:02d}" for p in parts))
    day = _MONTH_DAY.search(line)
    if day:
        month = _MONTHS.index(day.group(1).lower()) + 1
        # ls shows a year only for files over six months old: a bare time is this year's.
        year = int(day.group(6)) if day.group(6) else 9999
        hour, minute = int(day.group(3) or 0), int(day.group(4) or 0)
        return float(f"{year:04d}{month:02d}{int(day.group(2)):02d}{hour:02d}{minute:02d}00")
    return None


def _duration(line: str) -> float | None:
    best: float | None = None
    for match in _DURATION.finditer(line):
        seconds: float
        if match.group(3):
            seconds = int(match.group(3)) * 3600 + int(match.group(4)) * 60 + int(match.group(5))
        else:
            seconds = float(match.group(1)) * _unit_seconds(match.group(2).lower())
        best = seconds if best is None else max(best, seconds)
    return best


def _unit_seconds(unit: str) -> float:
    if unit in _SECONDS:
        return _SECONDS[unit]
    if unit.startswith("min"):
        return 60.0
    return 3600.0 if unit.startswith("h") else 1.0


def _count(line: str) -> float | None:
    edge = _COUNT_EDGE.search(line)
    if edge:
        return float(edge.group(1) or edge.group(2))
    numbers = [int(n) for n in _INTEGER.findall(line)]
    return float(max(numbers)) if numbers else None


_LEADING = re.compile(r"\s*(\d+)\s")


def extreme_lines(
    doc: Doc,
    want: Intent,
    *,
    top: int = 5,
    scan: int = 60_000,
    terms: tuple[str, ...] = (),
) -> list[int]:
    """The indices of the ``top`` lines most extreme for ``want``, most extreme first.

    In a table whose column one of the query's ``terms`` names ("the largest total" and a
    ``total_cents`` column), rows are ranked by that column. Sizes printed bare (``find
    -printf '%s %p'``, ``wc -c``) are read from the number that starts each line when no line
    shows a size with a unit or in a size column.
    """
    table = doc.table
    column = table.column_named(terms) if table is not None else None
    if table is not None and column is not None:
        scored = _scored(doc, want, scan, lambda line: _cell_value(table, line, column, want))
        if len(scored) >= 3:
            return [-negated for _, negated in heapq.nlargest(top, scored)]
    scored = _scored(doc, want, scan, lambda line: value(line, want.measure))
    if len(scored) < 3 and want.measure is Measure.SIZE:
        scored = _scored(doc, want, scan, _leading_number)
    best = heapq.nlargest(top, scored)
    return [-negated for _, negated in best]


def _scored(
    doc: Doc, want: Intent, scan: int, read: Callable[[str], float | None]
) -> list[tuple[float, int]]:
    sign = 1.0 if want.largest else -1.0
    scored: list[tuple[float, int]] = []
    for index, line in enumerate(doc.lines[:scan]):
        if line.strip():
            number = read(line)
            if number is not None:
                scored.append((sign * number, -index))
    return scored


def _cell_value(table: Table, line: str, column: int, want: Intent) -> float | None:
    cell = table.cell(line, column)
    if not cell:
        return None
    number = value(cell, want.measure)
    if number is not None:
        return number
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return None


def _leading_number(line: str) -> float | None:
    match = _LEADING.match(line)
    return float(match.group(1)) if match else None
