"""How well a shrunken output keeps what matters: the share of must-keep facts still present."""

from __future__ import annotations

from collections.abc import Sequence


def kept(output: str, must_keep: Sequence[str]) -> int:
    """How many of the ``must_keep`` substrings occur verbatim in ``output`` (CRLF read as LF)."""
    text = output.replace("\r\n", "\n")
    return sum(1 for item in must_keep if item.replace("\r\n", "\n") in text)


def keep_rate(kept_total: int, must_total: int) -> float:
    """Kept items over all items, 1.0 when there was nothing to keep."""
    return kept_total / must_total if must_total else 1.0
