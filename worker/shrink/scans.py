"""The lines a tool kind finds by its own patterns, beside the words every kind scans for.

A command's output: the last frame and the exception line of each traceback, bare locations
(``--> a.py:3:5``), linters' rule codes and the verdicts at its end. Search results: the
biggest per-file match counts (``rg -c``, ``grep -c``). Each scan reports the lines it finds
through ``add`` (start, end, kind, anchor); a ``ToolKind`` lists the scans it runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tersify.text.signals import CODE_FRAME, LONG_LINE, Kind, is_location_token, is_verdict
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.hits import spread
from tersify.worker.shrink.lines import LineLocator

Add = Callable[[int, int, Kind, int], None]
"""Reports one line: its start and end offsets, its kind, the offset that made it matter."""
Scan = Callable[[Doc, Add], None]

_LOCATION_ANCHOR = re.compile(r":\d+:(?:\d+|\s)")
# A linter's rule code after a location: "a.py:3:1: E0102:", "a.py:3:1: F821 " (E and F codes
# are errors in pycodestyle, pyflakes and pylint alike; W codes warnings).
_RULE_CODE = re.compile(r":\d+(?::\d+)?:? ([EFW])\d{3,4}\b")
MAX_LINES = 5_000
"""Lines a pattern's matches are read on at most: past this they are an even spread."""
_COLON_DIGIT = tuple(f":{digit}" for digit in "0123456789")
_MAX_COLON_DIGITS = 2 * MAX_LINES
"""Past this many, the patterns' own search is cheaper than trying each place."""
TRACEBACK = "traceback (most recent call last)"
_FRAME = re.compile(r'^\s+File "|^\s+at \S|^\s+\d+: |^\s+in ')
_TAIL_LINES = 60
_TRACE_SCAN = 400


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


def command_lines(doc: Doc, add: Add) -> None:
    """Traceback frames, bare locations (``--> a.py:3:5``) and the verdicts at the end."""
    text = doc.text
    locator = LineLocator(text)
    for pos in doc.hits.of(TRACEBACK):
        _, start, end = locator.locate(pos)
        add(start, end, Kind.FRAME, pos)
        for line_start, line_end, kind in _traceback_lines(text, start):
            add(line_start, line_end, kind, line_start)
    line_end = -1
    # A flood (every line a location) is read as an even spread of it: bounded work per text.
    found = [m.start() for m in _colon_digit_matches(doc, _LOCATION_ANCHOR)]
    for at in spread(found, MAX_LINES):
        if at <= line_end:
            continue
        _, start, line_end = locator.locate(at)
        before = text[max(start, at - 200) : at].split()
        if before and is_location_token(before[-1]) and not CODE_FRAME.match(text[start:at]):
            add(start, line_end, Kind.LOCATION, at)
    codes = {m.start(): m.group(1) for m in _colon_digit_matches(doc, _RULE_CODE)}
    for at in spread(list(codes), MAX_LINES):
        _, start, end = locator.locate(at)
        add(start, end, Kind.WARNING if codes[at] == "W" else Kind.ERROR, at)
    _add_tail_verdicts(text, add)


def _colon_digit_matches(doc: Doc, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    """``pattern.finditer(doc.text)`` for a pattern whose matches start with a colon and a
    digit: tried only where one is (a fast search) unless the text is not ASCII or they flood."""
    places = doc.hits.any_of(_COLON_DIGIT, _MAX_COLON_DIGITS)
    if places is None:
        return list(pattern.finditer(doc.text))
    found: list[re.Match[str]] = []
    end = 0
    for at in places:
        # As ``finditer``: the next match starts where the one before ended, or later.
        match = pattern.match(doc.text, at) if at >= end else None
        if match is not None:
            found.append(match)
            end = match.end()
    return found


def _add_tail_verdicts(text: str, add: Add) -> None:
    """Verdict lines (test summaries, totals) live at the end: match them there line by line."""
    start = len(text)
    for _ in range(_TAIL_LINES):
        if start <= 0:
            break
        end = start - 1 if text[start - 1] == "\n" else start
        start = text.rfind("\n", 0, end) + 1
        line = text[start : min(end, start + LONG_LINE)].strip()
        if line and is_verdict(line):
            add(start, end, Kind.VERDICT, start)


def match_counts(doc: Doc, add: Add) -> None:
    """In per-file match counts the biggest ones are what "where is most of it" asks for."""
    for start, end in top_counts(doc.text)[:40]:
        add(start, end, Kind.PROBLEM, start)


_COUNT = re.compile(r":(\d+)$", re.MULTILINE)
_COUNT_SAMPLE = re.compile(r"^[^\s:][^:\n]*:\d+$", re.MULTILINE)


def top_counts(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The lines with the biggest counts of ``rg -c`` style output (``path:N``), biggest first."""
    sample = text[:4000]
    if len(_COUNT_SAMPLE.findall(sample)) * 2 < sample.count("\n"):
        return []
    widest = max((len(digits) for digits in _COUNT.findall(text)), default=0)
    if widest == 0:
        return []
    stop = len(text) if end is None else end
    found: list[tuple[int, int, int]] = []
    for wide in (max(1, widest - 1), widest):
        pattern = re.compile(rf":(\d{{{wide},}})$", re.MULTILINE)
        found = []
        for match in pattern.finditer(text, start, stop):
            line_start = text.rfind("\n", 0, match.start()) + 1
            found.append((int(match.group(1)), line_start, match.end()))
            if len(found) > 2_000:
                break
        if len(found) <= 400:
            break
    found.sort(key=lambda row: -row[0])
    return [(line_start, line_end) for _, line_start, line_end in found[:400]]
