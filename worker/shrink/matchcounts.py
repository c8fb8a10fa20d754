"""Per-file match counts (``rg -c``, ``grep -c``): finding the biggest ones anywhere in the text."""

from __future__ import annotations

import re

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
