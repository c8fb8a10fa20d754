"""Files: the relevant range verbatim as hashlines, the lines the query names, an outline.

The relevant range is the job's (``relevant_lines``), else the stretch of lines that best
matches the query, else the middle third; it is shown as ``LINE#HH|text`` hashlines (an agent
edits by them), cut around its centre to what the budget holds. Every other line shown is a
hashline too, with its enclosing definitions as ancestry.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from tersify.contract import LineRange, ToolType
from tersify.text.signals import Kind
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.engine import Plan, choose, shrink_lines
from tersify.worker.shrink.hashlines import line_hash, source_lines
from tersify.worker.shrink.lines import newlines_before
from tersify.worker.shrink.quotes import NO_QUOTE, NumberedLines, Quote
from tersify.worker.shrink.ranker import SHIPPED, Choice
from tersify.worker.shrink.reading import Reading
from tersify.worker.shrink.render import MARKER_COST, render
from tersify.worker.shrink.salience import Salient
from tersify.worker.shrink.textcut import clip
from tersify.worker.shrink.worth import DEFINITION_WEIGHT, Candidate

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
OUTLINE_CHARS = 256 * 1024
"""Definitions are looked for in this much of a file (its start)."""
_BEFORE, _AFTER = 4, 12
_WINDOWS = 40


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

    def numbered(self) -> NumberedLines:
        """The file's lines as a model reads and quotes them: by number, as hashlines."""
        return NumberedLines(self.doc.lines, self.numbers, self.hashline)

    def reading(self, query: str | None, ranker: Choice = SHIPPED) -> Reading:
        """The file read for ``query`` (its relevant range and its shrink share it)."""
        return Reading.of(self.doc, ToolType.FILE_CONTENT, query, ranker)


def file_view(text: str) -> FileView:
    """The lines of a file as printed (``cat -n`` and ``N→`` prefixes read as line numbers)."""
    doc = Doc(text)
    src = source_lines(text, lines=doc.lines)
    printed = None
    if src.numbered:
        printed, doc = doc.lines, Doc("\n".join(src.lines))
    found = _DEFINITION.finditer(doc.text, 0, OUTLINE_CHARS)
    definitions = newlines_before(doc.text, [m.start() for m in found])
    return FileView(doc, src.numbers, definitions, printed)


def relevant_range(view: FileView, reading: Reading, wanted: LineRange | None) -> range:
    """The relevant lines (indices): the job's range, else the query's best, else the middle."""
    count = len(view.doc)
    if wanted is not None:
        start = bisect_left(view.numbers, wanted.start)
        return range(start, max(start, bisect_right(view.numbers, wanted.end)))
    matches = [i for i in reading.salient if i.kind is Kind.QUERY]
    if matches:
        best = _densest(view.doc, matches[:_WINDOWS], reading.weights.weights)
        return range(max(0, best - _BEFORE), min(count, best + _AFTER))
    third = count // 3
    return range(third, max(third, count - third))


def _densest(doc: Doc, matches: list[Salient], weights: dict[str, float]) -> int:
    """The match whose window of lines holds the most of the query (each term once, by its
    weight): the region a question is about, not the single line that best echoes it."""

    def held(item: Salient) -> tuple[float, float, int]:
        line = item.number - 1
        window = "\n".join(doc.lines[max(0, line - _BEFORE) : line + _AFTER]).lower()
        return (sum(w for t, w in weights.items() if t in window), item.weight, -item.start)

    return max(matches, key=held).number - 1


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


def range_quote(view: FileView, lines: range, room: int) -> Quote:
    """The relevant range as a quote of at most ``room`` chars: whole when it fits, else cut
    around its centre, the lines cut off at either end counted (``worker.shrink.quotes``)."""
    source = view.numbered()
    # Each line costs at least a few chars: a range far over the room is not rendered whole.
    if len(lines) * 4 <= room:
        whole = Quote(frozenset(lines), lines)
        if len(whole.text(source)) <= room:
            return whole
    chosen = range_candidate(view, lines, room - 2 * MARKER_COST)
    if chosen is None or chosen.span is None:
        return NO_QUOTE
    quote = Quote(frozenset(range(*chosen.span)), lines)
    # The centre line alone may be longer than the room: then nothing is quoted.
    return quote if len(quote.text(source)) <= room else NO_QUOTE


def range_text(view: FileView, lines: range, room: int) -> str:
    """The relevant range as hashlines, cut around its centre to ``room`` chars, gaps counted."""
    return range_quote(view, lines, room).text(view.numbered())


def file_part(
    view: FileView, start: int, stop: int, room: int, query: str | None
) -> tuple[str, list[int], bool]:
    """Lines ``[start, stop)`` of a file as hashlines in ``room`` chars: the text, the indices
    of the lines it shows, and whether it was cut.

    Cut by the engine, with the part's definitions among the candidates: what a model needs
    to describe the part's structure.
    """
    lines = view.doc.lines[start:stop]

    def numbered(index: int, shown: str) -> str:
        return view.hashline(start + index, shown)

    whole = "\n".join(numbered(i, line) for i, line in enumerate(lines))
    if len(whole) <= room:
        return whole, list(range(start, stop)), False
    extra = [
        Candidate(i - start, DEFINITION_WEIGHT, span=(i - start, i - start + 1))
        for i in view.definitions
        if start <= i < stop
    ]
    plan = Plan(room, head=room // 8, tail=room // 12, head_share=0.7, numbered=numbered)
    part = Doc("\n".join(lines))
    shown = choose(Reading.of(part, ToolType.FILE_CONTENT, query), plan, extra=extra)
    text = render(part.lines, shown, numbered=numbered)
    return text, sorted(start + i for i in shown), True


def summarize_file(
    text: str,
    budget: int,
    query: str | None,
    relevant: LineRange | None,
    *,
    edge_share: float = 0.0,
    ranker: Choice = SHIPPED,
) -> str:
    """A file in ``budget`` chars: its size, the relevant range as hashlines, what else the
    query or the outline names, every shown line a hashline; ``edge_share`` of the room holds
    the file's start and end fixed (the fallback's head and tail)."""
    view = file_view(text)
    reading = view.reading(query, ranker)
    head = f"[{len(view.doc)} lines, {len(view.definitions)} definitions]"
    room = budget - len(head) - 1
    lines = relevant_range(view, reading, relevant)
    chosen = range_candidate(view, lines, int(room * RANGE_SHARE))
    extra = [*definition_candidates(view), *([chosen] if chosen is not None else [])]
    edge = int(room * edge_share / 2)
    plan = Plan(room, head=edge, tail=edge, head_share=0.7, numbered=view.hashline)
    body = shrink_lines(reading, plan, extra=extra)
    return clip(f"{head}\n{body}", budget)
