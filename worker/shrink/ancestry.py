"""Ancestry: the lines that say where a line lives, kept with it so a kept line is never orphaned.

Three general mechanisms, the same for every tool type:

- **indentation**: the nearest less-indented line above, and its own, up to the top: the
  enclosing ``def``/``class``, the YAML or pretty-printed JSON parent key, the ``tree``
  folder, the man-page option a description belongs to; and the first line of the block the
  line sits in (a commit's subject above its message, a function's docstring);
- **headers**: the nearest header line above a top-level line: a Markdown or underlined
  heading, a ``commit <sha>`` line, a diff's file and hunk, a release heading (``## 1.2.3``,
  a Debian changelog entry), a banner (``==== FAILURES ====``, ``____ test_x ____``), a
  section name in capitals, a line ending in a colon (``./dir:`` of ``ls -lR``), a file path
  heading its search hits;
- **tables**: the header row of a table (``ps``, ``pip list``, ``docker ps``, CSV) for its rows.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from tersify.worker.shrink.document import Doc, newlines_before
from tersify.worker.shrink.tables import table_of

_HEADER = re.compile(
    r"#{1,6}[ \t]+\S"  # Markdown heading
    r"|(?i:commit)[ ][0-9a-f]{7,64}\b"  # a git log entry
    r"|diff[ ]--git[ ]|\+\+\+[ ]\S|Index:[ ]\S|@@[ ][-+]\d"  # a diff's file and hunk
    r"|==>[ ].*[ ]<==\s*$"  # head/tail of several files
    r"|[=_*#~+-]{3,}[ ]?[^\s=_*#~+-].*[=_*#~+-]{3,}\s*$"  # ==== FAILURES ====
    r"|\[?v?\d+(?:\.\d+){1,2}(?![.\d])(?:[-+~][\w.]+|[a-z]+\d*)?\]?"  # a release: 1.2.3,
    r"(?:\s*$|\s+\(|\s+-\s+\d|\s+/\s|:)"  # alone, or with a date: 1.2 (2024-01-02)
    r"|[\w.+-]+[ ]\([^)\s]+\)[ ][\w-]+(?:[ ][\w-]+)*;[ ]urgency="  # Debian changelog
    r"|(?i:version|release)[ ]v?\d"
    r"|[A-Z][A-Z0-9 /&_-]{2,60}\s*$"  # a section name in capitals
    r"|[^\s:][^\n]{0,200}?[^:\s)]:[ \t]*$"  # ./dir:  Section:  (not C++ "Foo::", code "f(x):")
)
_UNDERLINE = re.compile(r"\s*(?:={3,}|-{3,})\s*$")
_GREP_HEADING_HIT = re.compile(r"\d+[:-]")
_PATH_LINE = re.compile(r"(?:\./|/)?[\w@+.,=~-]+(?:/[\w@+.,=~ -]*)*\.\w{1,8}\s*$")

_CLOSING = frozenset(")]}")
MAX_SCAN = 1500
"""Lines looked at above a line for its ancestors: a header further away is not found."""
MAX_ANCESTORS = 4
GENERIC_LEVEL = 5
_MAX_HOPS = 12
_SIBLING_SCAN = 200  # headers passed over looking for an outer one (hunks on the way to a file)


# Where a header may start, found by fast scans of the whole text (each led by a newline, so
# the regex engine skips to the next newline at C speed); ``is_header`` decides each one.
_MAYBE = re.compile(
    r"\n(?=#|@@ |[Cc]ommit |diff |\+\+\+ |Index: |==> |\*\*\*|~~~|\[?v?\d+\.\d"
    r"|[Vv]ersion |[Rr]elease |[A-Z][A-Z0-9 /&_-]{2,60}\n"
    r"|(===|---|___|\d+[:-]))"  # group 1: an underline or a first "12:text" search hit, which
)  # make the line above them a candidate too
_ENDS_IN_COLON = re.compile(r":[ \t]*\n")


def is_header(doc: Doc, index: int) -> bool:
    """Whether line ``index`` heads what follows it (a heading, a banner, a commit, ...)."""
    lines = doc.lines
    line = lines[index]
    if not line or line[0] in " \t":
        return False
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if following[:1] in ("=", "-") and _UNDERLINE.match(following) and len(line.strip()) >= 2:
        return True
    if following[:1].isdigit() and _PATH_LINE.match(line) and _GREP_HEADING_HIT.match(following):
        return True  # a file path alone on its line, its hits below it as "12:text" (rg)
    return _HEADER.match(line) is not None


def headers(doc: Doc) -> list[int]:
    """Every header line of ``doc``, in order (found once per document)."""
    known: list[int] | None = doc.__dict__.get("_headers")
    if known is not None:
        return known
    text = "\n" + doc.text + "\n"  # the first and the last line are found like the others
    # Each candidate line is named by the offset in ``text`` of the newline before it.
    before: set[int] = set()
    for m in _MAYBE.finditer(text):
        at = m.start()
        before.add(at)
        if m.lastindex and at:  # an underline or a first search hit: the line above too
            above = text.rfind("\n", 0, at)
            if not (m.group(1)[0].isdigit() and text[above + 1 : above + 2].isdigit()):
                before.add(above)
    # "./dir:" and "Section:" head the lines below them; a colon line indented, or with an
    # indented body (a "def f():", a YAML parent), is a parent by indentation instead.
    for m in _ENDS_IN_COLON.finditer(text):
        at = text.rfind("\n", 0, m.start())
        if text[at + 1] not in " \t" and text[m.end() : m.end() + 1] not in (" ", "\t"):
            before.add(at)
    urgency = text.find("; urgency=")  # a Debian changelog entry
    while urgency != -1:
        before.add(text.rfind("\n", 0, urgency))
        urgency = text.find("; urgency=", urgency + 1)
    found = [i for i in newlines_before(text, sorted(before)) if i < len(doc) and is_header(doc, i)]
    doc.__dict__["_headers"] = found
    return found


def header_above(doc: Doc, index: int, *, scan: int = MAX_SCAN) -> int | None:
    """The nearest header strictly above line ``index``, within ``scan`` lines."""
    found = headers(doc)
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
    outer = header_level(lines[index]) if top == index and is_header(doc, index) else None
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
    table = table_header(doc)
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
    if _UNDERLINE.match(lines[index]) and index > floor and lines[index - 1].strip():
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


def header_level(line: str) -> int:
    """How outer a header is: a commit 0, a file 1, a hunk 2, Markdown by its ``#`` count,
    anything else 5 (the nearest one is shown, no further)."""
    if line.startswith(("commit ", "Commit ")):
        return 0
    if line.startswith(("diff ", "+++ ", "Index: ", "==> ")):
        return 1
    if line.startswith("@@ "):
        return 2
    if line.startswith("#"):
        return len(line) - len(line.lstrip("#"))
    return GENERIC_LEVEL


def table_header(doc: Doc) -> int | None:
    """The header row when the text is a table (``worker.shrink.tables``)."""
    table = table_of(doc)
    return table.header if table is not None else None
