"""Quotes: lines of an output copied exactly, each with its number, every gap between them counted.

A model summary points at the lines that are its evidence and the worker copies them, instead of
the model retyping them: a quote is exact by construction and its characters cost no output
tokens. A file's relevant range reaches its summary the same way. Lines are chosen by index; a
quote's size is its rendered size, markers included, so a budget holds exactly, and a line is
never cut: one that does not fit is left out, and counted.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tersify.worker.shrink.hashlines import numbered_line
from tersify.worker.shrink.render import render


@dataclass(frozen=True, slots=True)
class NumberedLines:
    """An output's lines as a model reads them: each line's text, its number, how it is shown."""

    lines: list[str]
    numbers: Sequence[int]  # ascending, one per line
    label: Callable[[int, str], str]  # (index, text) → the line as shown: ``12|text``

    def index(self, number: int) -> int | None:
        """The index of the line numbered ``number``; None when no line has that number."""
        at = bisect_left(self.numbers, number)
        return at if at < len(self.numbers) and self.numbers[at] == number else None


def plain_lines(lines: list[str]) -> NumberedLines:
    """``lines`` numbered 1, 2, 3, … and shown as ``N|text``."""
    return NumberedLines(
        lines, range(1, len(lines) + 1), lambda index, text: numbered_line(index + 1, text)
    )


@dataclass(frozen=True, slots=True)
class Quote:
    """Lines to copy (indices) and the stretch they stand in: gaps inside it are counted."""

    shown: frozenset[int]
    window: range

    def text(self, source: NumberedLines) -> str:
        """The shown lines in order, each as ``source`` labels it, each gap a marker line."""
        if not self.shown:
            return ""
        lines = source.lines
        return render(
            lines,
            {i: lines[i] for i in self.shown},
            numbered=source.label,
            start=self.window.start,
            stop=self.window.stop,
        )


NO_QUOTE = Quote(frozenset(), range(0))


def joined(first: Quote, second: Quote) -> Quote:
    """Both quotes' lines in one stretch (what lies between them counted as a gap)."""
    if not second.shown:
        return first
    if not first.shown:
        return second
    window = range(
        min(first.window.start, second.window.start), max(first.window.stop, second.window.stop)
    )
    return Quote(first.shown | second.shown, window)


def take(
    source: NumberedLines, spans: Sequence[range], budget: int, base: Quote = NO_QUOTE
) -> Quote:
    """``base`` plus ``spans`` (indices, most important first) in at most ``budget`` chars more.

    Each span is taken whole while it fits, else as many of its first lines as fit (the rest
    counted by a marker); a span whose first line does not fit is left out.
    """
    quote = base
    allowed = len(base.text(source)) + max(0, budget)
    for span in spans:
        count = _fitting_head(source, quote, span, allowed)
        if count:
            quote = joined(quote, Quote(frozenset(span[:count]), span))
    return quote


def _fitting_head(source: NumberedLines, quote: Quote, span: range, allowed: int) -> int:
    """How many of ``span``'s first lines fit beside ``quote`` in ``allowed`` chars (0: none)."""

    def fits(count: int) -> bool:
        trial = joined(quote, Quote(frozenset(span[:count]), span))
        return len(trial.text(source)) <= allowed

    # Every shown line costs at least its label's 2 chars and a newline: no more can fit.
    most = min(len(span), allowed // 3 + 1)
    if most == len(span) and fits(most):
        return most
    low, high = 0, most  # fits(low) holds (nothing added); find the largest count that fits
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low
