"""File content: an outline of definitions with line numbers, then the section that matters."""

from __future__ import annotations

import re
from bisect import bisect_right

from producer.textcut import split_lines
from worker.shrink.extractive.compose import Composer
from worker.shrink.extractive.regions import Window, best_windows, line_scores
from worker.shrink.hashlines import SourceLines, source_lines
from worker.shrink.lines import LineLocator
from worker.shrink.query import file_name_terms
from worker.shrink.textcut import clip

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
_CONTAINER = re.compile(
    r"^\s*(?:export\s+)?(?:pub\s+)?(?:class|struct|interface|trait|impl|module|#)"
)
# Past this size only the start, the end and the lines near the query's words are read.
_BIG_FILE = 256 * 1024
_EXCERPT_HEAD = 1500
_EXCERPT_TAIL = 500
_EXCERPT_AROUND = 30
_OUTLINE_ENTRY = 110
_LINE_SHOWN = 220


def _definitions(body: str) -> list[int]:
    """Indices of the lines that define something (functions, classes, sections, headings).

    A Markdown heading counts only when a blank line follows it: a "# comment" in code runs
    into the code below.
    """
    locator = LineLocator(body)
    return [locator.locate(m.start())[0] - 1 for m in _DEFINITION.finditer(body)]


def _excerpt(text: str, query: str | None) -> tuple[str, list[int], int]:
    """A very big file's lines worth reading (start, end, near the query) and their numbers."""
    raw = split_lines(text)
    keep = set(range(min(len(raw), _EXCERPT_HEAD)))
    keep.update(range(max(0, len(raw) - _EXCERPT_TAIL), len(raw)))
    scores = line_scores(text, query, demote=file_name_terms(query))
    for index in sorted(scores, key=lambda i: -scores[i])[:60]:
        keep.update(range(max(0, index - _EXCERPT_AROUND), min(len(raw), index + _EXCERPT_AROUND)))
    chosen = sorted(keep)
    return "\n".join(raw[i] for i in chosen), [i + 1 for i in chosen], len(raw)


def summarize_file(text: str, budget: int, query: str | None) -> str:
    """Size and outline, then the query's best sections verbatim (or the file's start)."""
    out = Composer(budget)
    numbers = None
    if len(text) > _BIG_FILE:
        text, numbers, total = _excerpt(text, query)
        out.add(f"[{total} lines; read as its start, its end and the lines near the query's words]")
    src = source_lines(text, numbers)
    lines = src.lines
    body = "\n".join(lines)
    defs = _definitions(body)
    scores = line_scores(body, query, demote=file_name_terms(query))
    out.add(f"{len(lines)} lines, {len(text)} chars; {len(defs)} definitions")
    outline_room = int(budget * (0.3 if scores else 0.45))
    lengths = [min(len(line), _LINE_SHOWN) for line in lines]
    windows = best_windows(
        scores,
        lengths,
        budget - outline_room - 60,
        before=4,
        after=6,
        owner_of=lambda i: _enclosing(defs, lines, i),
    )
    _add_outline(out, src, defs, scores, windows, out.used + outline_room)
    if windows:
        out.add("matching the query:")
        for window in windows:
            if window.owner is not None:
                out.add_clipped(
                    f"{src.numbers[window.owner]}| {clip(lines[window.owner], _LINE_SHOWN)}"
                )
                out.add("…")
            for i in range(window.start, window.end):
                if not out.add_clipped(f"{src.numbers[i]}| {clip(lines[i], _LINE_SHOWN)}"):
                    break
        return out.text()
    out.add("start of file:")
    for i, line in enumerate(lines):
        if not out.add_clipped(f"{src.numbers[i]}| {clip(line, _LINE_SHOWN)}"):
            break
    return out.text()


def _enclosing(defs: list[int], lines: list[str], index: int) -> int:
    """The nearest definition at or above ``index`` that is less indented, within 25 lines."""
    pos = bisect_right(defs, index) - 1
    indent = len(lines[index]) - len(lines[index].lstrip())
    while pos >= 0 and index - defs[pos] <= 25:
        line = lines[defs[pos]]
        if len(line) - len(line.lstrip()) < indent or defs[pos] == index:
            return defs[pos]
        pos -= 1
    return index


def _add_outline(
    out: Composer,
    src: SourceLines,
    defs: list[int],
    scores: dict[int, float],
    windows: list[Window],
    limit: int,
) -> None:
    """The definitions that fit: containers, query matches and window owners before the rest."""
    if not defs:
        return

    def rank(i: int) -> tuple[float, int]:
        line = src.lines[i]
        weight = scores.get(i, 0.0) * 3
        weight += 2.0 if any(w.start <= i < w.end or w.owner == i for w in windows) else 0.0
        weight += 1.0 if _CONTAINER.match(line) else 0.0
        weight += 0.5 if not line[:1].isspace() else 0.0
        return (-weight, i)

    entries = {i: f"L{src.numbers[i]} {clip(src.lines[i].strip(), _OUTLINE_ENTRY)}" for i in defs}
    chosen: list[int] = []
    room = limit - out.used - 20
    for i in sorted(defs, key=rank):
        cost = len(entries[i]) + 1
        if cost <= room:
            chosen.append(i)
            room -= cost
    out.add("outline:", until=limit)
    out.add_all((entries[i] for i in sorted(chosen)), until=limit)
    if len(chosen) < len(defs):
        out.add(f"(+{len(defs) - len(chosen)} more definitions)", until=limit + 40)
