"""Ancestry: the lines that say where a line lives, kept with it so a kept line is never orphaned.

Three general mechanisms, the same for every tool type:

- **indentation**: the nearest less-indented line above, and its own, up to the top: the
  enclosing ``def``/``class``, the YAML or pretty-printed JSON parent key, the ``tree``
  folder, the man-page option a description belongs to; and the first line of the block the
  line sits in (a commit's subject above its message, a function's docstring);
- **headers**: the nearest header line above a top-level line (``headers``: a heading, a
  commit, a diff's file and hunk, a banner, ``./dir:`` of ``ls -lR``...), and the outer
  headers above it;
- **tables**: the header row of a table (``ps``, ``pip list``, ``docker ps``, CSV) for its rows.
"""

from __future__ import annotations

from bisect import bisect_left

from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.headers import GENERIC_LEVEL, UNDERLINE, header_level, is_header

_CLOSING = frozenset(")]}")
MAX_SCAN = 1500
"""Lines looked at above a line for its ancestors: a header further away is not found."""
MAX_ANCESTORS = 4
_MAX_HOPS = 12
_SIBLING_SCAN = 200  # headers passed over looking for an outer one (hunks on the way to a file)


def header_above(doc: Doc, index: int, *, scan: int = MAX_SCAN) -> int | None:
    """The nearest header strictly above line ``index``, within ``scan`` lines."""
    found = doc.headers
    at = bisect_left(found, index) - 1
    return found[at] if at >= 0 and found[at] >= index - scan else None


def ancestors(doc: Doc, index: int, *, scan: int = MAX_SCAN) -> list[int]:
    """The lines that locate line ``index``, outermost first (at most ``MAX_ANCESTORS``)."""
    found: list[int] = []
    lines = doc.lines
    level = doc.indent(index) if lines[index].strip() else 0
    top = index
    floor = max(0, index - scan)
    at = index
    lead = None  # the first line of the block holding ``index``
    while level > 0 and len(found) < MAX_ANCESTORS:
        # The parent chain (memoized jumps): each less-indented line above, outward.
        above = doc.parent(at, floor) if lines[at].strip() else _nonblank_above(doc, at)
        if above < floor or (at != index and doc.indent(above) >= level):
            break
        if not found:
            lead = _first_sibling(doc, above, index, level)
        opener = _opener(doc, above, doc.indent(above), floor)
        found.append(opener)
        level, top, at = doc.indent(opener), opener, opener
    if lead is not None and found:
        found.append(lead)  # a commit's subject above its message, a docstring, a first key
    # A header's ancestor is not the header before it (a commit is not inside the last one),
    # but a header of an outer level is (a diff's file above its hunk, "#" above "##").
    outer = header_level(lines[index]) if top == index and is_header(lines, index) else None
    below = top
    hops = 0
    while level == 0 and len(found) < MAX_ANCESTORS:
        # Headers are indexed once per text: the one heading a line is found however far
        # above it sits (an ``ls -lR`` folder, a diff's file, a commit above its hunks).
        header = header_above(doc, below, scan=len(doc))
        if header is None:
            break
        rank = header_level(lines[header])
        if outer is None or rank < outer:
            found.append(header)
            outer = rank
        hops += 1
        if outer <= 0 or outer == GENERIC_LEVEL or hops >= _MAX_HOPS:
            break  # a generic header has no outer one to look for
        below = header
    table = doc.table.header if doc.table is not None else None
    if table is not None and table < index and table not in found:
        found.append(table)
    return sorted(found)


def _nonblank_above(doc: Doc, index: int) -> int:
    at = index - 1
    while at >= 0 and not doc.lines[at].strip():
        at -= 1
    return at


def _first_sibling(doc: Doc, parent: int, index: int, level: int) -> int | None:
    """The first line after ``parent`` at ``level`` (the block ``index`` sits in), if any."""
    for at in range(parent + 1, min(index, parent + _SIBLING_SCAN)):
        if doc.lines[at].strip() and doc.indent(at) == level:
            return at
    return None


def _opener(doc: Doc, index: int, level: int, floor: int) -> int:
    """For a line that closes brackets (``) -> None:``), the line that opened them; for the
    underline of a heading (``=====``), the heading."""
    lines = doc.lines
    if UNDERLINE.match(lines[index]) and index > floor and lines[index - 1].strip():
        return index - 1
    if lines[index].lstrip()[:1] not in _CLOSING:
        return index
    i = index - 1
    while i >= floor and i > index - 40:
        line = lines[i]
        if line.strip() and doc.indent(i) <= level and line.lstrip()[:1] not in _CLOSING:
            return i if doc.indent(i) == level else index
        i -= 1
    return index
