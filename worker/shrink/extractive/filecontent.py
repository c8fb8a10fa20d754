"""File content: its relevant range verbatim as hashlines, the lines the query names, an outline.

The relevant range is the job's (``relevant_lines``), else the stretch of lines that best
matches the query, else the middle third; it is shown as ``LINE#HH|text`` hashlines (an agent
edits by them), cut around its centre to what the budget holds. Every other line shown is a
hashline too, with its enclosing definitions as ancestry.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from producer.classify.signals import Kind
from producer.contract import LineRange, ToolType
from worker.shrink.document import Doc
from worker.shrink.engine import Candidate, salient
from worker.shrink.hashlines import line_hash, source_lines
from worker.shrink.lines import LineLocator

# Matched over the whole file at once (MULTILINE): a per-line loop costs far more on big files.
_DEFINITION = re.compile(
    r"^(?:[ \t]*(?:(?:export[ \t]+)?(?:default[ \t]+)?(?:pub(?:\([^)\n]*\))?[ \t]+)?"
    r"(?:async[ \t]+)?(?:def|class|function\*?|fn|func|struct|enum|trait|impl|mod|module|"
    r"interface|type|namespace|protocol|extension|object|record|Function|Class)[ \t]+[\w:.<>-]+"
    r"|(?:export[ \t]+)?const[ \t]+\w+[ \t]*=[ \t]*(?:async[ \t]*)?(?:\([^)\n]*\)|\w+)[ \t]*=>"
    r"|(?:public|private|protected|internal|static|override|virtual|final)[\w \t<>\[\],?]*\("
    r"|\w+[ \t]*\(\)[ \t]*\{"
    r"|(?:CREATE|ALTER|create|alter)[ \t]+(?:TABLE|VIEW|FUNCTION|INDEX|PROCEDURE|TRIGGER|table|"
    r"view|function|index|procedure|trigger)\b)"
    r"|(?:(?:static|inline|extern|const|unsigned|struct|virtual)[ \t]+)*[A-Za-z_][\w:<>]*"
    r"[ \t*&]+\**[\w:~]+[ \t]*\([^;\n]*\)[ \t]*(?:const[ \t]*)?\{?[ \t]*$"
    r"|\[\[?[\w.\-\" ]+\]\]?[ \t]*$"
    r"|#{1,6}[ \t]+\S[^\n]*\n[ \t]*$)",
    re.MULTILINE,
)
RANGE_SHARE = 0.55
"""Of the room, what the relevant range may take."""
DEFINITION_WEIGHT = 1.5
OUTLINE_CHARS = 256 * 1024
"""Definitions are looked for in this much of a file (its start)."""
_BEFORE, _AFTER = 4, 12


@dataclass(frozen=True, slots=True)
class FileView:
    """A file as the shrinks read it: its lines (number prefixes gone) and their numbers."""

    doc: Doc
    numbers: list[int]
    definitions: list[int]
    printed: list[str] | None = None  # the lines as printed, when they came numbered

    def hashline(self, index: int, shown: str) -> str:
        """Line ``index`` as ``LINE#HH|shown``, hashed whole even when ``shown`` is cut.

        A line that came numbered (``cat -n``, ``N→``) is shown as printed, its number too.
        """
        if self.printed is not None and shown == self.doc.lines[index]:
            shown = self.printed[index]
        return f"{self.numbers[index]}#{line_hash(self.doc.lines[index])}|{shown}"


def file_view(text: str) -> FileView:
    """The lines of a file as printed (``cat -n`` and ``N→`` prefixes read as line numbers)."""
    src = source_lines(text)
    doc = Doc("\n".join(src.lines))
    locator = LineLocator(doc.text)
    found = _DEFINITION.finditer(doc.text, 0, OUTLINE_CHARS)
    definitions = [locator.locate(m.start())[0] - 1 for m in found]
    printed = Doc(text).lines if src.numbered else None
    return FileView(doc, src.numbers, definitions, printed)


def relevant_range(view: FileView, query: str | None, wanted: LineRange | None) -> range:
    """The relevant lines (indices): the job's range, else the query's best, else the middle."""
    count = len(view.doc)
    if wanted is not None:
        start = bisect_left(view.numbers, wanted.start)
        return range(start, max(start, bisect_right(view.numbers, wanted.end)))
    matches = [i for i in salient(view.doc, ToolType.FILE_CONTENT, query) if i.kind is Kind.QUERY]
    if matches:
        best = max(matches, key=lambda s: (s.weight, -s.start)).number - 1
        return range(max(0, best - _BEFORE), min(count, best + _AFTER))
    third = count // 3
    return range(third, max(third, count - third))


def range_candidate(view: FileView, lines: range, room: int) -> Candidate | None:
    """The relevant range, cut around its centre to ``room`` chars of hashlines."""
    if not lines:
        return None
    centre = (lines.start + lines.stop - 1) // 2
    start, end = centre, centre + 1
    used = len(view.hashline(centre, view.doc.lines[centre])) + 1
    while True:
        grew = False
        for index in (end, start - 1):
            if lines.start <= index < lines.stop and index not in range(start, end):
                cost = len(view.hashline(index, view.doc.lines[index])) + 1
                if used + cost <= room:
                    used += cost
                    start, end = min(start, index), max(end, index + 1)
                    grew = True
        if not grew:
            return Candidate(centre, float("inf"), span=(start, end))


def definition_candidates(view: FileView) -> list[Candidate]:
    """Each definition line, worth a little: an outline where room is left."""
    return [Candidate(i, DEFINITION_WEIGHT, span=(i, i + 1)) for i in view.definitions]
