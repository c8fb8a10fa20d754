"""Numbered lines: ``LINE#HH|text`` hashlines (a line number plus a short content hash an agent
can edit by) for files, ``LINE|text`` for every other output."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

from tersify.text.cut import split_lines

# "   12\tcode" (cat -n) and "    12→code" (agent read tools) number a file's lines already.
_NUMBERED = re.compile(r"^\s*(\d+)(?:\t|→)")


def line_hash(line: str) -> str:
    """Two lower-case hex digits: the low byte of the line's CRC-32 (UTF-8, surrogates kept)."""
    return f"{zlib.crc32(line.encode('utf-8', 'surrogatepass')) & 0xFF:02x}"


def hashline(number: int, line: str) -> str:
    """One line as ``LINE#HH|text``."""
    return f"{number}#{line_hash(line)}|{line}"


def numbered_line(number: int, line: str) -> str:
    """One line as ``LINE|text``: how a model reads (and quotes) the lines of any other output."""
    return f"{number}|{line}"


@dataclass(frozen=True, slots=True)
class SourceLines:
    """A file's lines (number prefixes removed) and their line numbers."""

    lines: list[str]
    numbers: list[int]
    numbered: bool = False  # the lines came with number prefixes (read off and removed)


def source_lines(
    text: str, numbers: list[int] | None = None, *, lines: list[str] | None = None
) -> SourceLines:
    """The lines of a file as printed, reading numbers off ``cat -n`` style prefixes if present.

    ``numbers`` gives the numbers of unprefixed lines (an excerpt's own), default 1, 2, 3, ….
    ``lines`` are ``text`` already split, when the caller has them.
    """
    lines = split_lines(text) if lines is None else lines
    sample = lines[:200]
    numbered = sum(1 for line in sample if _NUMBERED.match(line))
    if not sample or numbered < 0.8 * len(sample):
        given = numbers if numbers is not None and len(numbers) == len(lines) else None
        return SourceLines(lines, given or list(range(1, len(lines) + 1)))
    body: list[str] = []
    found: list[int] = []
    last = 0
    for line in lines:
        match = _NUMBERED.match(line)
        if match:
            last = int(match.group(1))
            body.append(line[match.end() :])
        else:
            last += 1
            body.append(line)
        found.append(last)
    return SourceLines(body, found, numbered=True)
