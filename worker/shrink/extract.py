"""The built-in extractive provider: deterministic, structure-aware summaries without a model.

A few facts (the kind's ``facts``), then the engine's choice of whole records with their
ancestry (``worker.shrink.engine``); a file shows its relevant range as hashlines (``files``).
"""

from __future__ import annotations

from tersify.contract import LineRange, ToolType
from tersify.text.sanitize import sanitize
from tersify.worker.shrink.engine import Plan
from tersify.worker.shrink.facts import stated
from tersify.worker.shrink.fallback import fallback_truncate
from tersify.worker.shrink.files import summarize_file
from tersify.worker.shrink.kinds import kind_of
from tersify.worker.shrink.leftout import mapped_shrink
from tersify.worker.shrink.ranker import SHIPPED, Choice
from tersify.worker.shrink.reading import Reading
from tersify.worker.shrink.reflow import as_doc
from tersify.worker.shrink.textcut import clip

# Below this budget structure costs more than it shows: plain truncation does better.
_MIN_STRUCTURED_BUDGET = 200
FACTS_SHARE = 1 / 6
EDGE_SHARE = 0.1
"""Of the room, what the head and the tail each hold fixed."""


def extract(
    text: str,
    tool_type: ToolType,
    budget: int,
    query: str | None = None,
    relevant: LineRange | None = None,
    *,
    ranker: Choice = SHIPPED,
) -> str:
    """A summary of ``text`` in at most ``budget`` chars, shaped by its tool type; never raises.

    Candidates are weighed by ``ranker`` (the shipped one unless said; None: the rules).
    """
    try:
        if budget <= 0:
            return ""
        clean = sanitize(text)
        if len(clean) <= budget:
            return clean
        if budget < _MIN_STRUCTURED_BUDGET:
            return fallback_truncate(clean, tool_type, budget, query)
        kind = kind_of(tool_type)
        if kind.numbered_file:
            return summarize_file(clean, budget, query, relevant, ranker=ranker)
        doc = as_doc(clean, kind)
        head = "\n".join(stated(kind.facts, doc.text, int(budget * FACTS_SHARE)))
        room = budget - len(head) - (1 if head else 0)
        edge = int(room * EDGE_SHARE)
        plan = Plan(room, head=edge, tail=edge, head_share=kind.head_ratio)
        reading = Reading.of(doc, tool_type, query, ranker)
        body = mapped_shrink(reading, plan, mapped=doc.text is clean)
        return clip(f"{head}\n{body}" if head else body, budget)
    except Exception:  # the extractive provider stands in for a model: it must always answer
        return fallback_truncate(text, tool_type, budget, query)
