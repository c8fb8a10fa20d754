"""Web pages and documents: the headings, then the sections and paragraphs matching the query."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from producer.textcut import split_lines
from worker.shrink.extractive.compose import Composer, joined
from worker.shrink.extractive.regions import line_scores
from worker.shrink.textcut import clip

_MARKDOWN_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_UNDERLINE = re.compile(r"^\s*(?:={3,}|-{3,}|~{3,})\s*$")
_NUMBERED = re.compile(r"^\s{0,3}\d+(?:\.\d+)*\.?\s+[A-Z]\S*(?:\s+\S+){0,8}\s*$")
_PERMALINK = "¶"
_SENTENCE_END = re.compile(r"[.!?:;,。、]\s*$")
_MAX_SECTIONS = 6
_CODE_LINE = re.compile(r"[=(){}\[\]]|^\s*(?:#|//|\$ |>>> |async |await |def |import |return )")


@dataclass(slots=True)
class _Section:
    heading: str | None
    start: int
    paragraphs: list[tuple[int, int]] = field(default_factory=list)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_heading(lines: list[str], i: int, body_indent: int) -> bool:
    line = lines[i]
    stripped = line.strip()
    if not stripped or len(stripped) > 120:
        return False
    if _MARKDOWN_HEADING.match(line) or stripped.endswith(_PERMALINK):
        return True
    following = lines[i + 1] if i + 1 < len(lines) else ""
    if _UNDERLINE.match(following) and len(stripped) >= 2:
        return True
    previous_blank = i == 0 or not lines[i - 1].strip()
    if not previous_blank or len(stripped) > 70 or _SENTENCE_END.search(stripped):
        return False
    # Man pages and plain-text manuals: section names sit left of the indented body.
    if body_indent >= 3 and _indent(line) == 0 and following.strip() and _indent(following) >= 3:
        return True
    return bool(_NUMBERED.match(line)) and not following.strip()


def _sections(lines: list[str]) -> list[_Section]:
    """Sections (heading + paragraphs) in document order; text before any heading goes first."""
    indents = sorted(_indent(line) for line in lines[:2000] if line.strip())
    body_indent = indents[len(indents) // 2] if indents else 0
    sections = [_Section(None, 0)]
    para_start: int | None = None
    for i, line in enumerate(lines):
        if _UNDERLINE.match(line) and i > 0 and sections[-1].start == i - 1:
            continue
        if _is_heading(lines, i, body_indent):
            if para_start is not None:
                sections[-1].paragraphs.append((para_start, i))
                para_start = None
            sections.append(_Section(line.strip().lstrip("#").rstrip(_PERMALINK).strip(), i))
        elif line.strip():
            if para_start is None:
                para_start = i
        elif para_start is not None:
            sections[-1].paragraphs.append((para_start, i))
            para_start = None
    if para_start is not None:
        sections[-1].paragraphs.append((para_start, len(lines)))
    return [s for s in sections if s.heading or s.paragraphs]


def summarize_web(text: str, budget: int, query: str | None) -> str:
    """An outline of headings, then the best sections with their matching paragraphs."""
    lines = split_lines(text)
    sections = _sections(lines)
    scores = line_scores(text, query)
    out = Composer(budget)
    headings = list(dict.fromkeys(s.heading for s in sections if s.heading))
    if headings:
        out.add("outline: " + joined(headings, int(budget * (0.2 if scores else 0.3)), sep=" · "))

    def para_score(span: tuple[int, int]) -> float:
        return sum(scores.get(i, 0.0) for i in range(*span))

    def section_score(section: _Section) -> float:
        heading = 2 * scores.get(section.start, 0.0)
        best = max((para_score(p) for p in section.paragraphs), default=0.0)
        score = heading + best + 0.2 * sum(para_score(p) for p in section.paragraphs)
        # Text before the first heading is mostly navigation and a table of contents.
        return score * 0.3 if section.heading is None and len(sections) > 1 else score

    ranked = sorted(sections, key=lambda s: -section_score(s)) if scores else sections
    top = section_score(ranked[0]) if scores and ranked else 0.0
    chosen = [s for s in ranked if not scores or section_score(s) >= 0.3 * top > 0]
    chosen = chosen[:_MAX_SECTIONS]
    if not chosen:
        chosen = sections[:_MAX_SECTIONS]
    blocks: dict[int, list[str]] = {}
    room = out.remaining
    for rank, section in enumerate(chosen):
        # The best section gets half the room when others follow; the rest share what is left.
        parts = 2 if rank == 0 and len(chosen) > 1 else max(1, min(len(chosen) - rank, 3))
        share = min(room, max(room // parts, 200))
        block = _section_block(section, lines, share, para_score if scores else None)
        if block:
            blocks[section.start] = block
            room -= sum(len(line) + 1 for line in block)
        if room < 60:
            break
    for start in sorted(blocks):
        out.add_all(blocks[start])
    return out.text()


def _section_block(
    section: _Section,
    lines: list[str],
    share: int,
    score: Callable[[tuple[int, int]], float] | None,
) -> list[str]:
    """A section's heading and its best paragraphs (plus those between them), in order."""
    block = Composer(share)
    if section.heading and not block.add(f"## {clip(section.heading, 100)}"):
        return []
    paragraphs = section.paragraphs
    room = block.remaining

    def cost(index: int) -> int:
        return sum(len(lines[i].strip()) + 1 for i in range(*paragraphs[index]))

    picked: set[int] = set()
    # Reference pages put the defining facts right under the heading: keep the lead in order.
    for index in range(len(paragraphs)):
        if cost(index) > room - block.budget // 2:
            break
        picked.add(index)
        room -= cost(index)
    if score is not None:

        def density(k: int) -> float:
            start, end = paragraphs[k]
            code = sum(1 for i in range(start, end) if _CODE_LINE.search(lines[i]))
            # Examples repeat the query's words without explaining them.
            penalty = 0.3 if code * 2 > end - start else 1.0
            return penalty * score(paragraphs[k]) / math.sqrt(end - start)

        for index in sorted(range(len(paragraphs)), key=lambda k: -density(k)):
            if index in picked:
                continue
            if score(paragraphs[index]) <= 0:
                break
            if cost(index) <= room:
                picked.add(index)
                room -= cost(index)
        if picked:
            # Paragraphs between two matches usually carry the thread of the explanation.
            for index in range(min(picked), max(picked)):
                if index not in picked and cost(index) <= room:
                    picked.add(index)
                    room -= cost(index)
    if not picked:
        picked = set(range(len(paragraphs)))
    for index in sorted(picked):
        for i in range(*paragraphs[index]):
            if not block.add_clipped(lines[i].strip()):
                return block.text().split("\n")
    return block.text().split("\n")
