"""Inline text tools for tool output: scrollback preview, elision, tail-biased truncation.

Pure functions without I/O; ``truncate`` only calls the ``spill`` callback it is given. A "line"
is what ``line_count`` counts: text up to and including a ``\\n``, plus a last line without one.
Budgets are hard limits: ``truncate`` never returns more UTF-8 bytes or lines than allowed, never
splits a UTF-8 sequence and (within reason) never separates a character from its combining marks.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tersify.text.cut import safe_end, safe_start, split_lines

DEFAULT_MAX_LINES = 30
DEFAULT_HEAD = 5
DEFAULT_TAIL = 10
ELLIPSIS = "…"

Spill = Callable[[str], str | None]

_SURROGATE = re.compile("[\ud800-\udfff]")


def line_count(text: str) -> int:
    """How many lines ``text`` holds: its newlines, plus one for an unterminated last line."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def preview(
    text: str | None,
    max_lines: int = DEFAULT_MAX_LINES,
    head: int = DEFAULT_HEAD,
    tail: int = DEFAULT_TAIL,
) -> str:
    """The scrollback preview: every line up to ``max_lines``, else head + marker + tail."""
    if min(max_lines, head, tail) < 0:
        raise ValueError("max_lines, head and tail must not be negative")
    lines = [line.removesuffix("\r") for line in split_lines(text or "")]
    hidden = len(lines) - head - tail
    if len(lines) <= max_lines or hidden <= 0:
        return "\n".join(lines)
    marker = f"{ELLIPSIS} [{hidden} more lines · full output in the session log] {ELLIPSIS}"
    return "\n".join([*lines[:head], marker, *lines[len(lines) - tail :]])


# ``max`` shadows the builtin on purpose: it is the keyword callers of these two functions use.
def elide(text: str | None, max: int) -> str:
    """``text`` cut to ``max`` characters, then ``…`` appended, when it is longer than that."""
    s = text or ""
    if len(s) <= max:
        return s
    return s[: safe_end(s, max if max > 0 else 0)] + ELLIPSIS


def first_nonblank_line(text: str | None) -> str:
    """The first line of ``text`` that is not blank, stripped; ``""`` when there is none."""
    for line in (text or "").split("\n"):
        if stripped := line.strip():
            return stripped
    return ""


def first_line(text: str | None, max: int) -> str:
    """The first non-blank line, elided so that the whole result, ``…`` included, fits ``max``."""
    first = first_nonblank_line(text)
    if len(first) <= max:
        return first
    if max <= 0:
        return ""
    return first[: safe_end(first, max - 1)] + ELLIPSIS


def _scrub(text: str) -> str:
    """``text`` with lone surrogates (unencodable in UTF-8) replaced by U+FFFD."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _prefix(text: str, data: bytes, max_bytes: int, max_lines: int) -> str:
    """The longest cluster-safe prefix of ``text`` within both budgets."""
    end = 0
    for _ in range(max_lines):
        newline = text.find("\n", end)
        if newline < 0:
            end = len(text)
            break
        end = newline + 1
    cut = min(max(max_bytes, 0), len(data))
    while 0 < cut < len(data) and data[cut] & 0xC0 == 0x80:  # a UTF-8 continuation byte
        cut -= 1
    end = min(end, len(data[:cut].decode()))
    return text[: safe_end(text, end)]


def _suffix_start(text: str, data: bytes, max_bytes: int, max_lines: int, floor: int) -> int:
    """Where the longest cluster-safe suffix within both budgets (and after ``floor``) starts."""
    start = len(text)
    if max_lines > 0:
        search_end = len(text) - 1 if text.endswith("\n") else len(text)
        for _ in range(max_lines):
            newline = text.rfind("\n", 0, search_end)
            if newline < 0:
                search_end = -1
                break
            search_end = newline
        start = search_end + 1
    cut = len(data) - min(max(max_bytes, 0), len(data))
    while cut < len(data) and data[cut] & 0xC0 == 0x80:
        cut += 1
    start = max(start, len(text) - len(data[cut:].decode()), floor)
    return safe_start(text, start)


def _head_and_tail(
    text: str, data: bytes, max_bytes: int, max_lines: int, location: str | None
) -> str | None:
    """~10% head, the rest tail, a marker between; None when the marker would eat the budget."""
    recover = f" · full output: {location} — read it with offset/limit" if location else ""

    def marker(elided_bytes: int, elided_lines: int) -> str:
        counts = f"{elided_bytes} bytes / {elided_lines} lines elided"
        return f"{ELLIPSIS} [{counts}{recover} · narrow with grep/head/tail] {ELLIPSIS}"

    # Counts never exceed the totals, so the totals' widths reserve enough; +2 for the newlines.
    reserved = len(marker(len(data), line_count(text)).encode()) + 2
    content_bytes, content_lines = max_bytes - reserved, max_lines - 1
    if content_bytes < reserved or content_lines < 1:
        return None
    head_lines = max(content_lines // 10, min(DEFAULT_HEAD, content_lines // 2))
    head = _prefix(text, data, content_bytes // 10, head_lines)
    head_bytes = len(head.encode())
    start = _suffix_start(
        text, data, content_bytes - head_bytes, content_lines - line_count(head), len(head)
    )
    tail = text[start:]
    elided = marker(len(data) - head_bytes - len(tail.encode()), text.count("\n", len(head), start))
    before = "\n" if head and not head.endswith("\n") else ""
    after = "\n" if tail else ""
    return f"{head}{before}{elided}{after}{tail}"


def _head_only(text: str, data: bytes, max_bytes: int, max_lines: int, location: str | None) -> str:
    """A head cut with a short note, for budgets too small to hold the middle marker."""
    cut = f"{ELLIPSIS} [cut at {max_bytes} bytes / {max_lines} lines"
    notes = [f"{cut} · full output: {location}]"] if location else []
    notes.append(f"{cut}]")
    for note in notes:
        size = len(note.encode())
        if 2 * size <= max_bytes and max_lines >= 2:
            head = _prefix(text, data, max_bytes - size - 1, max_lines - 1)
            before = "\n" if head and not head.endswith("\n") else ""
            return f"{head}{before}{note}"
    if max_bytes >= len(ELLIPSIS.encode()) and max_lines >= 1:
        # Inline on the head's last line, or a line of its own after a complete line.
        return _prefix(text, data, max_bytes - len(ELLIPSIS.encode()), max_lines - 1) + ELLIPSIS
    return _prefix(text, data, max_bytes, max_lines)


def truncate(text: str | None, max_bytes: int, max_lines: int, spill: Spill | None = None) -> str:
    """``text`` within ``max_bytes`` UTF-8 bytes and ``max_lines`` lines, tail-biased.

    Keeps ~10% head and the rest of the budget for the tail, where errors, exit codes and
    summaries live, with a marker saying how much was elided. ``spill`` (called with the full
    text only when something is cut) may return where the full text was saved; the marker then
    says how to read it back. Tiny budgets get a head-only cut with a short note.
    """
    if max_bytes < 0 or max_lines < 0:
        raise ValueError("max_bytes and max_lines must not be negative")
    text = _scrub(text or "")
    data = text.encode()
    if len(data) <= max_bytes and line_count(text) <= max_lines:
        return text
    location = spill(text) if spill is not None else None
    if location is not None:
        location = " ".join(location.split()) or None  # a newline would break the line budget
    return _head_and_tail(text, data, max_bytes, max_lines, location) or _head_only(
        text, data, max_bytes, max_lines, location
    )
