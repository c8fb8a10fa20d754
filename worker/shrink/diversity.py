"""Diversity: many lines of one shape collapse to one with a count, so rare lines survive.

A line's shape is what stays when its leading location, numbers, hashes and quoted names are
taken out: 300 ``unused variable `x12` `` errors share one shape; the one ``mismatched types``
among them has its own, and the rarer a shape, the more it is worth showing.
"""

from __future__ import annotations

import math
import re

_QUOTED = re.compile(r"'[^'\n]{0,120}'|\"[^\"\n]{0,120}\"|`[^`\n]{0,120}`|‘[^’\n]{0,120}’")
_HEX = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{6,}\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_SPACE = re.compile(r"\s+")
# The location a diagnostic starts with ("src/a.py:12:5: ", "  --> a.rs:3:1"): where, not what.
_LOCATION = re.compile(r"^\s*(?:-->\s*)?(?:[\w.~/\\-]+)?:\d+(?::\d+)?:?\s*")
_SHAPE_CHARS = 72


def shape(line: str) -> str:
    """The line with what varies between repeats of it replaced: its shape."""
    text = _LOCATION.sub("", line.strip()[:400], count=1) or line.strip()[:400]
    text = _QUOTED.sub("'…'", text)
    text = _HEX.sub("#", text)
    text = _NUMBER.sub("#", text)
    return _SPACE.sub(" ", text)[:_SHAPE_CHARS]


def rarity(count: int, total: int) -> float:
    """How much rarer than its fellows a shape of ``count`` lines among ``total`` is (0..1)."""
    if total <= 1 or count >= total:
        return 0.0
    return max(0.0, min(1.0, math.log(total / count) / math.log(max(total, 2))))
