"""Tables: a header row and rows that split into the same columns (CSV, TSV, ``|`` tables,
aligned output such as ``ps``, ``docker ps``, ``pip list``, ``psql``).

A table row's ancestor is its header row (``ancestry``), and a query that names a column
ranks rows by that column (``extremes``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tersify.worker.shrink.lines import depth

_ALIGNED = re.compile(r"\s{2,}|\t")
_RULE = re.compile(r"\s*[-=+| ]{3,}\s*$")
_SAMPLE_ROWS = 60


@dataclass(frozen=True, slots=True)
class Table:
    """Where a table's header is and how its rows split into cells."""

    header: int
    columns: list[str]  # lower-cased names
    split: Callable[[str], list[str]]

    def cell(self, line: str, column: int) -> str | None:
        """The cell of ``line`` in ``column``, or None when the row is short."""
        cells = self.split(line)
        return cells[column].strip() if column < len(cells) else None

    def column_named(self, terms: tuple[str, ...]) -> int | None:
        """The column a term names: named exactly, else holding the term, else held in it.

        A short name is only matched exactly: "id" is not the column "paid" asks about.
        """
        tests = (
            lambda term, name: term == name,
            lambda term, name: term in name,
            lambda term, name: len(name) >= 4 and name in term,
        )
        for matches in tests:
            for term in terms:
                for index, name in enumerate(self.columns):
                    if name and matches(term, name):
                        return index
        return None


def _splitter(delimiter: str) -> Callable[[str], list[str]]:
    if delimiter == "aligned":
        return lambda line: _ALIGNED.split(line.strip())
    return lambda line: line.split(delimiter)


def find_table(lines: list[str]) -> Table | None:
    """The table ``lines`` are, if they are one (a ``Doc`` holds its own: ``Doc.table``)."""
    rows = [i for i in range(min(len(lines), _SAMPLE_ROWS)) if lines[i].strip()]
    if len(rows) < 4:
        return None
    first = lines[rows[0]]
    # A table may be padded by a space or two (psql's aligned output); code is indented more.
    if depth(first) > 2 or first.strip()[:1].isdigit():
        return None
    body = [lines[i] for i in rows[1:] if not _RULE.match(lines[i])]
    for delimiter in (",", "\t", "|", "aligned"):
        split = _splitter(delimiter)
        width = len(split(first))
        if width < 2:
            continue
        same = sum(1 for line in body if len(split(line)) in (width - 1, width, width + 1))
        if same >= 0.8 * len(body):
            return Table(rows[0], [c.strip().lower() for c in split(first)], split)
    return None
