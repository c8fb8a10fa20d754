"""Cutting a text for a shrink: clips, heads and tails that end on a line or a clean break.

Where a cut may fall at all (never inside a character cluster) is ``producer.textcut``'s.
"""

from __future__ import annotations

from tersify.text.cut import safe_end, safe_start

MARKER_TEMPLATE = "[...{n} chars omitted...]"
ELLIPSIS = "…"
# Characters after which a long line (minified JSON, a wrapped log line) reads as a clean break.
_BREAKS = (", ", ",", "}", "]", ";", " ", ")", "\t")


def marker(omitted: int) -> str:
    """The line that stands for ``omitted`` characters left out."""
    return MARKER_TEMPLATE.format(n=omitted)


def clip(text: str, limit: int, *, ellipsis: bool = False) -> str:
    """``text`` cut to at most ``limit`` chars on a character boundary, optionally ending in '…'."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    if ellipsis:
        return text[: safe_end(text, limit - 1)] + ELLIPSIS
    return text[: safe_end(text, limit)]


def head_end(text: str, limit: int, *, start: int = 0) -> int:
    """Where a head of at most ``limit`` chars from ``start`` should end: a line end if near."""
    end = start + max(0, limit)
    if end >= len(text):
        return len(text)
    newline = text.rfind("\n", start, end + 1)
    if newline >= start and newline - start >= limit // 2:
        # The head ends before a CRLF pair, never between its halves.
        return newline - 1 if newline > start and text[newline - 1] == "\r" else newline
    return _break_backward(text, start, end)


def tail_start(text: str, limit: int, *, end: int | None = None) -> int:
    """Where a tail of at most ``limit`` chars ending at ``end`` starts: a line start if near."""
    stop = len(text) if end is None else end
    begin = stop - max(0, limit)
    if begin <= 0:
        return 0
    newline = text.find("\n", begin - 1, stop)
    if newline != -1 and stop - (newline + 1) >= limit // 2:
        return newline + 1
    return _break_forward(text, begin, stop)


def _break_backward(text: str, start: int, end: int) -> int:
    """A cut inside a long line: after a comma, brace or space near ``end``, else at ``end``."""
    window = max(16, (end - start) // 5)
    best = -1
    for brk in _BREAKS:
        found = text.rfind(brk, max(start, end - window), end)
        if found != -1:
            best = max(best, found + len(brk))
            break
    cut = best if best > start and best <= end else end
    return safe_end(text, cut)


def _break_forward(text: str, begin: int, stop: int) -> int:
    """A cut inside a long line: just after a break character near ``begin``, else at ``begin``."""
    window = max(16, (stop - begin) // 5)
    best = -1
    for brk in _BREAKS:
        found = text.find(brk, begin, min(stop, begin + window))
        if found != -1 and found + len(brk) <= stop:
            best = found + len(brk)
            break
    cut = best if best >= begin else begin
    return safe_start(text, cut)
