"""Headers: the lines that head what follows them, found once per text.

A Markdown or underlined heading, a ``commit <sha>`` line, a diff's file and hunk, a release
heading (``## 1.2.3``, a Debian changelog entry), a banner (``==== FAILURES ====``,
``____ test_x ____``), a section name in capitals, a line ending in a colon (``./dir:`` of
``ls -lR``), a file path heading its search hits. A ``Doc`` holds its headers
(``Doc.headers``); ``ancestry`` shows the one above a line with it.
"""

from __future__ import annotations

import re
import string

from tersify.worker.shrink.hits import Hits
from tersify.worker.shrink.lines import newlines_before

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
UNDERLINE = re.compile(r"\s*(?:={3,}|-{3,})\s*$")
_GREP_HEADING_HIT = re.compile(r"\d+[:-]")
_PATH_LINE = re.compile(r"(?:\./|/)?[\w@+.,=~-]+(?:/[\w@+.,=~ -]*)*\.\w{1,8}\s*$")

GENERIC_LEVEL = 5


# Where a header may start, found by fast scans of the whole text (each led by a newline, so
# the regex engine skips to the next newline at C speed); ``is_header`` decides each one.
_MAYBE = re.compile(
    r"\n(?=[#@cdrv0-9A-Z+=*~\[_-])"  # the first chars below, tested at once: most lines fail here
    r"(?=#|@@ |[Cc]ommit |diff |\+\+\+ |Index: |==> |\*\*\*|~~~|\[?v?\d+\.\d"
    r"|[Vv]ersion |[Rr]elease |[A-Z][A-Z0-9 /&_-]{2,60}\n"
    r"|(===|---|___|\d+[:-]))"  # group 1: an underline or a first "12:text" search hit, which
)  # make the line above them a candidate too
_ENDS_IN_COLON = re.compile(r":[ \t]*\n(?![ \t])")  # the line below not indented
_URGENCY = "; urgency="


def is_header(lines: list[str], index: int) -> bool:
    """Whether line ``index`` of ``lines`` heads what follows it (a heading, a banner, ...)."""
    line = lines[index]
    if not line or line[0] in " \t":
        return False
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if following[:1] in ("=", "-") and UNDERLINE.match(following) and len(line.strip()) >= 2:
        return True
    if following[:1].isdigit() and _PATH_LINE.match(line) and _GREP_HEADING_HIT.match(following):
        return True  # a file path alone on its line, its hits below it as "12:text" (rg)
    return _HEADER.match(line) is not None


COLON_ENDS = (":\n", " \n", "\t\n")
"""What ends a line that ends in a colon, blanks after it or not."""
STARTS = (
    *("\n#", "\n@@ ", "\ncommit ", "\ndiff ", "\n+++ ", "\n==> ", "\n***", "\n~~~", "\n["),
    *("\nversion ", "\nrelease ", "\n===", "\n---", "\n___"),
    *(f"\n{first}" for first in string.digits + string.ascii_uppercase),
    *(f"\nv{digit}" for digit in string.digits),
)
"""How a line that ``_MAYBE`` matches starts (after the newline before it): each of its
choices begins with one of these."""
_MOST_PLACES = 5_000
"""Past this many places to try, the whole-text regex is the cheaper."""


def find_headers(text: str, lines: list[str], hits: Hits | None = None) -> list[int]:
    """Every header line of ``text`` (split as ``lines``), in order; ``hits``: where needles
    occur in ``text`` (case as written), to try the patterns only where they may match."""
    starts = _fast_starts(text, hits) if hits is not None else None
    if starts is None:
        starts = _starts(text)
    return [i for i in newlines_before(text, starts) if i < len(lines) and is_header(lines, i)]


def _starts(text: str) -> list[int]:
    """Where the lines that may be headers start, found by whole-text scans."""
    text = "\n" + text + "\n"  # the first and the last line are found like the others
    # Each candidate line is named by the offset in ``text`` of the newline before it: its
    # start in the text without that leading newline.
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
        if text[at + 1] not in " \t":
            before.add(at)
    urgency = text.find(_URGENCY)  # a Debian changelog entry
    while urgency != -1:
        before.add(text.rfind("\n", 0, urgency))
        urgency = text.find(_URGENCY, urgency + 1)
    return sorted(before)


def _fast_starts(text: str, hits: Hits) -> list[int] | None:
    """``_starts``, the patterns tried only where ``hits`` found a line that may match them;
    None when that is no cheaper (a text not ASCII, or too many such lines)."""
    newlines = hits.any_of(STARTS, _MOST_PLACES)
    # One needle at a time: each is a fast single search (together, on " " first, slow).
    ends = [hits.any_of((end,), _MOST_PLACES) for end in COLON_ENDS]
    if newlines is None or None in ends:
        return None
    starts: set[int] = set()
    for at in [-1, *newlines]:
        # The line after the newline at ``at`` (-1: the first), with its own newline.
        stop = text.find("\n", at + 1)
        line = text[at + 1 : stop + 1] if stop != -1 else text[at + 1 :] + "\n"
        m = _MAYBE.match("\n" + line)
        if m is None:
            continue
        starts.add(at + 1)
        if m.lastindex and at >= 0:  # an underline or a first search hit: the line above too
            above = text.rfind("\n", 0, at) + 1
            if not (m.group(1)[0].isdigit() and text[above : above + 1].isdigit()):
                starts.add(above)
    for newline in sorted({at + 1 for found in ends if found for at in found} | {len(text)}):
        colon = newline - 1
        while colon >= 0 and text[colon] in " \t":
            colon -= 1
        if colon < 0 or text[colon] != ":" or text[newline + 1 : newline + 2] in (" ", "\t"):
            continue
        start = text.rfind("\n", 0, colon) + 1
        if text[start] not in " \t":
            starts.add(start)
    starts.update(text.rfind("\n", 0, at) + 1 for at in hits.of(_URGENCY))
    return sorted(starts)


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
