"""Very long lines made into lines a shrink can choose from, every character kept as it was.

Minified JSON becomes one member per line, indented by depth, so each value keeps its key path
as its ancestry; an object or array short enough stays whole on its line. Other long lines are
wrapped at a clean break (after a comma, a semicolon, a space); markup first gets one element
per line. Nothing is re-serialized: a
value reads exactly as in the output, spacing included.
"""

from __future__ import annotations

import re

from tersify.text.cut import safe_end
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.kinds import ToolKind

WRAP = 200
"""Longest piece of a wrapped line."""
LONG = 1000
"""Lines longer than this are reflowed."""
INLINE = 160
"""An object or array whose raw text is at most this long stays on one line."""
MAX_JSON_REFLOW = 512 * 1024

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\],]|[^"{}\[\],]+')
_COMMA = ","
_BREAKS = (", ", "; ", " ", ",", ";", "}", ")", "]", "|")


def needs_reflow(text: str, lines: list[str]) -> bool:
    """Whether long lines hold a fair share of ``text`` (minified JSON, a one-line log)."""
    long_chars = sum(filter(LONG.__lt__, map(len, lines)))  # built-ins only: C speed
    return long_chars > 0.3 * len(text)


def reflow(text: str) -> str:
    """``text`` with its long lines reflowed (JSON structurally, anything else wrapped)."""
    stripped = text.strip()
    if stripped[:1] in "[{" and len(text) <= MAX_JSON_REFLOW:
        structured = reflow_json(stripped)
        if structured is not None:
            return structured
    return "\n".join(wrap_long(line) if len(line) > LONG else line for line in text.split("\n"))


def wrap_long(line: str, width: int = WRAP) -> str:
    """A long line reflowed: markup one element per line (a break between ``>`` and ``<``),
    then any piece still longer than ``width`` wrapped."""
    if line.count("><") * 2 * width > len(line):  # mostly tags: XML, HTML, JUnit reports
        return "\n".join(wrap(piece, width) for piece in line.replace("><", ">\n<").split("\n"))
    return wrap(line, width)


def wrap(line: str, width: int = WRAP) -> str:
    """``line`` cut into pieces of at most ``width`` chars, each after a clean break if near."""
    pieces: list[str] = []
    start = 0
    while len(line) - start > width:
        end = start + width
        cut = -1
        for brk in _BREAKS:
            found = line.rfind(brk, start + width // 2, end)
            if found != -1:
                cut = found + len(brk)
                break
        cut = cut if cut > start else safe_end(line, end)
        cut = cut if cut > start else end  # a run of one cluster longer than the width
        pieces.append(line[start:cut])
        start = cut
    pieces.append(line[start:])
    return "\n".join(pieces)


def reflow_json(text: str) -> str | None:
    """A JSON value's raw text with one member per line; None when the brackets do not match."""
    tokens = [(m.start(), m.group()) for m in _TOKEN.finditer(text)]
    closing: dict[int, int] = {}
    stack: list[int] = []
    for index, (_, token) in enumerate(tokens):
        if token in ("{", "["):
            stack.append(index)
        elif token in ("}", "]"):
            if not stack:
                return None
            closing[stack.pop()] = index
    if stack:
        return None
    out: list[str] = []
    _emit(text, tokens, closing, 0, len(tokens), 0, out)
    return "\n".join(line for line in out if line.strip())


def _emit(
    text: str,
    tokens: list[tuple[int, str]],
    closing: dict[int, int],
    first: int,
    stop: int,
    level: int,
    out: list[str],
) -> None:
    """Emit the members between token ``first`` and ``stop`` at ``level``, one per line."""
    pad = " " * level
    line: list[str] = []
    index = first
    while index < stop:
        position, token = tokens[index]
        if token in ("{", "["):
            close = closing[index]
            end = tokens[close][0] + 1
            if end - position <= INLINE:
                line.append(text[position:end])
                index = close + 1
                continue
            out.append(pad + "".join(line).lstrip() + token)
            line = []
            _emit(text, tokens, closing, index + 1, close, level + 1, out)
            line.append(tokens[close][1])
            index = close + 1
            continue
        if token == _COMMA:
            out.append(pad + "".join(line).strip() + ",")
            line = []
        else:
            line.append(token)
        index += 1
    if "".join(line).strip():
        out.append(pad + "".join(line).strip())


def as_doc(text: str, kind: ToolKind) -> Doc:
    """The ``Doc`` a shrink reads: long lines reflowed, but a file's (its lines are numbered)."""
    doc = Doc(text)
    if not kind.numbered_file and needs_reflow(text, doc.lines):
        return Doc(reflow(text))
    return doc
