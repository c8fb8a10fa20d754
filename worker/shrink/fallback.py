"""Type-aware head/tail truncation that also carries the salient records of the omitted middle.

The fallback holds a head and a tail by the kind's ratio (``ToolKind.head_ratio``) and lets the
engine (``worker.shrink.engine``) choose what else to carry from the middle: errors, verdicts, the
query's lines, each with the lines that locate it. ``head_tail`` is the plain cut, the
baseline it is measured against.
"""

from __future__ import annotations

from tersify.contract import LineRange, ToolType
from tersify.text.sanitize import sanitize
from tersify.worker.shrink.engine import Plan
from tersify.worker.shrink.files import summarize_file
from tersify.worker.shrink.kinds import kind_of
from tersify.worker.shrink.leftout import mapped_shrink
from tersify.worker.shrink.reading import Reading
from tersify.worker.shrink.reflow import as_doc
from tersify.worker.shrink.textcut import clip, head_end, marker, tail_start

# Share of the budget for what is carried from the middle; the head and the tail keep the rest.
CARRY_SHARE = 0.7
_MIN_FRAME = 16
_MIN_ENGINE_BUDGET = 120


def head_tail(text: str, ratio: float, limit: int) -> str:
    """The plain cut: head and tail on line boundaries around a marker, at most ``limit`` chars."""
    try:
        return _cut(text, ratio, limit)
    except Exception:  # the baseline must answer on any input, like the fallback
        return _last_resort(text, limit)


def fallback_truncate(
    text: str,
    tool_type: ToolType,
    budget: int,
    query: str | None = None,
    relevant: LineRange | None = None,
) -> str:
    """Sanitized head/tail by the type's ratio, carrying salient and query records of the middle.

    A file keeps its relevant range as hashlines (``worker.shrink.files``).
    """
    try:
        if budget <= 0:
            return ""
        clean = sanitize(text)
        if len(clean) <= budget:
            return clean
        kind = kind_of(tool_type)
        if budget < _MIN_ENGINE_BUDGET:
            return _cut(clean, kind.head_ratio, budget)
        if kind.numbered_file:
            return summarize_file(clean, budget, query, relevant, edge_share=1 - CARRY_SHARE)
        ratio = kind.head_ratio
        frame = budget * (1 - CARRY_SHARE)
        plan = Plan(
            budget, head=int(frame * ratio), tail=int(frame * (1 - ratio)), head_share=ratio
        )
        doc = as_doc(clean, kind)
        # Lines are numbered in the map as the output printed them: not when reflowed.
        return mapped_shrink(Reading.of(doc, tool_type, query), plan, mapped=doc.text is clean)
    except Exception:  # the fallback is the last resort of every job: it never raises
        return _last_resort(text, budget)


def _last_resort(text: object, limit: int) -> str:
    try:
        return clip(sanitize(str(text)), limit)
    except Exception:
        return ""


def _cut(text: str, ratio: float, budget: int) -> str:
    """Head and tail of ``text`` on line boundaries (or clean breaks) around a marker."""
    if budget <= 0:
        return ""
    if len(text) <= budget:
        return text
    frame = len(marker(len(text))) + 2
    if budget < frame + _MIN_FRAME:
        return clip(text, budget)
    avail = budget - frame
    head = head_end(text, int(avail * min(max(ratio, 0.0), 1.0)))
    tail = max(head, tail_start(text, avail - head))
    result = "\n".join([text[:head], marker(tail - head), text[tail:]])
    return result if len(result) <= budget else clip(result, budget)
