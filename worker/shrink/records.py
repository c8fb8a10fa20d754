"""Records, not lines: the unit a line belongs to, kept or dropped whole.

A line and the lines that continue it form one record: what is indented under it or quotes
code under it (a compiler error's code frame and notes, a traceback's frames, a JSON object's
members, a YAML mapping, a man-page option's description, a commit's message), or, in prose,
the paragraph around it.
"""

from __future__ import annotations

import re

from tersify.text.signals import CODE_FRAME
from tersify.worker.shrink.document import Doc

_CLOSERS = frozenset({"}", "]", "},", "],", ")", "),", "end", "fi", "done", "esac"})
# A line pointing at the code a report is about: pytest's "> code", a caret line.
_POINTER = re.compile(r">\s{3}|\s+\^+\s*$")
# The line that ends a report with where it happened: "pkg/store.py:18: KeyError".
_LOCATION = re.compile(r"[\w./\\-]+\.\w{1,8}:\d+:(?: \w[\w.]*)?\s*$")
_FRAME_LINES = 3


def record(
    doc: Doc, index: int, *, max_lines: int = 8, max_chars: int = 700, prose: bool = False
) -> tuple[int, int]:
    """The lines ``[start, end)`` of the record holding line ``index`` (``index`` included).

    In prose a line with nothing indented under it belongs to its paragraph; one with an
    indented body (a man page's option, a definition list's term) to that body.
    """
    start, end = _indented(doc, index, max_lines, max_chars)
    if prose and end == index + 1:
        return _paragraph(doc, index, max_lines, max_chars)
    if end == index + 1 and _introduces(doc, index):
        end += 1  # "panicked at src/lib.rs:58:19:" and the message on the next line
    return _pointed_at(doc, start), _located_by(doc, end)


def _introduces(doc: Doc, index: int) -> bool:
    """Whether line ``index`` ends in a colon and the line below continues it at its depth."""
    lines = doc.lines
    nxt = index + 1
    return (
        lines[index].rstrip().endswith(":")
        and nxt < len(lines)
        and bool(lines[nxt].strip())
        and doc.indent(nxt) == doc.indent(index)
    )


def _pointed_at(doc: Doc, start: int) -> int:
    """The record's start moved over the code it reports on, right above it (``>  code``)."""
    lines = doc.lines
    for _ in range(_FRAME_LINES):
        if start > 0 and _POINTER.match(lines[start - 1]):
            start -= 1
    return start


def _located_by(doc: Doc, end: int) -> int:
    """The record's end moved over the location line that closes a report (``a.py:18: E``),
    right below it or after one blank line."""
    lines = doc.lines
    for step in (0, 1):
        at = end + step
        if at < len(lines) and _LOCATION.match(lines[at]):
            return at + 1
        if at >= len(lines) or lines[at].strip():
            break
    return end


def _indented(doc: Doc, index: int, max_lines: int, max_chars: int) -> tuple[int, int]:
    """Line ``index`` and what is indented under it (or quotes code under it)."""
    lines = doc.lines
    base = doc.indent(index)
    end = index + 1
    size = len(lines[index])
    while end < len(lines) and end - index < max_lines:
        line = lines[end]
        if not line.strip():
            # One blank line inside a record: a commit's message under its header lines.
            nxt = end + 1
            if nxt < len(lines) and lines[nxt].strip() and doc.indent(nxt) > base:
                end += 1
                continue
            break
        if doc.indent(end) <= base and not CODE_FRAME.match(line):
            if line.strip() in _CLOSERS and doc.indent(end) == base:
                end += 1
            break
        size += len(line) + 1
        if size > max_chars:
            break
        end += 1
    return index, end


def _paragraph(doc: Doc, index: int, max_lines: int, max_chars: int) -> tuple[int, int]:
    """The run of non-blank lines around ``index`` at its indentation, centred and bounded."""
    lines = doc.lines
    if not lines[index].strip():
        return index, index + 1
    base = doc.indent(index)
    start, end = index, index + 1
    size = len(lines[index])

    def joins(i: int) -> bool:
        return 0 <= i < len(lines) and bool(lines[i].strip()) and doc.indent(i) == base

    while end - start < max_lines:
        grew = False
        for candidate in (start - 1, end):
            if end - start >= max_lines or not joins(candidate):
                continue
            if size + len(lines[candidate]) + 1 > max_chars:
                continue
            size += len(lines[candidate]) + 1
            start, end = min(start, candidate), max(end, candidate + 1)
            grew = True
        if not grew:
            break
    return start, end
