"""Severity: when the query asks for the errors, the warnings or the notes (``Query.severity``),
the lines of that severity are what it names — most of all when they are the few among many.

A severity counts only where a report puts it, as a field: before a colon or a closing
bracket or quote (``a.c:3:1: warning:``, ``[error]``, ``"severity": "warning"``) or as a
log level at the start of a line. A sentence that mentions an error is not one.
"""

from __future__ import annotations

import re
from collections import Counter

from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.lines import newlines_before

_FIELD = re.compile(
    r"(?:^|[\s\[(\"'])(error|warning|warn|note|info|style|critical|fatal|debug|hint)(?=[\]):\"'])"
    r"|^[ \t]*(?:\[[^\]\n]{0,40}\][ \t]*)*(error|warning|warn|info|debug|fatal|critical)\b",
    re.MULTILINE,
)
MAX_FOUND = 20_000
"""Severity fields read at most (a flood of one kind tells nothing more)."""
MINORITY = 0.3
"""The asked severity is singled out when at most this share of the fields are of it."""


def severity_lines(doc: Doc, wanted: str, limit: int = 40) -> list[int]:
    """The lines reporting ``wanted`` when they are a minority of the severities the text
    reports (at most ``limit``, in order); none when most lines report it anyway."""
    kinds: Counter[str] = Counter()
    starts: list[int] = []
    for count, match in enumerate(_FIELD.finditer(doc.low)):
        if count >= MAX_FOUND:
            break
        level = match.group(1) or match.group(2)
        level = "warning" if level == "warn" else level
        kinds[level] += 1
        if level == wanted:
            starts.append(match.start())
    total = sum(kinds.values())
    if not starts or len(starts) > MINORITY * total:
        return []
    lines = sorted(set(newlines_before(doc.text, starts)))
    if len(lines) > limit:
        step = len(lines) / limit
        lines = [lines[int(i * step)] for i in range(limit)]
    return lines
