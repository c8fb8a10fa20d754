"""Evidence: where the query's answer sits, found by what the text shows, not by the program.

Signals beside the line-by-line choice of ``salience``: the query's term weights over the
text, the blocks holding most of the query (``focus``), and the lines of the severity the query
asks for (``severity``).
"""

from __future__ import annotations

from tersify.text.signals import Kind
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.focus import Block, focus_blocks
from tersify.worker.shrink.query import Query
from tersify.worker.shrink.salience import Salient
from tersify.worker.shrink.severity import severity_lines
from tersify.worker.shrink.terms import TermWeights
from tersify.worker.shrink.worth import (
    FOCUS_WEIGHT,
    RARE_TERM_WEIGHT,
    SEVERITY_WEIGHT,
    Candidate,
    Source,
)

FOCUS_WHOLE_CHARS = 900
"""A focused block up to this long is offered whole (at the local budgets)."""
FOCUS_SHARE = 0.5
STRONG_COVERAGE = 0.5


def severity_candidates(doc: Doc, query: Query) -> list[Candidate]:
    """The lines of the severity the query names, when they are a minority (``severity``)."""
    wanted = query.severity
    if wanted is None:
        return []
    lines = severity_lines(doc, wanted)
    return [
        Candidate(
            i, SEVERITY_WEIGHT - 0.1 * rank, record_lines=3, focused=True, source=Source.SEVERITY
        )
        for rank, i in enumerate(lines)
    ]


def focused_candidates(doc: Doc, items: list[Salient], weights: TermWeights) -> list[Candidate]:
    """The blocks where the query's evidence is densest: small ones whole, big ones as their
    first line and the lines inside that hold what the first line lacks."""
    anchors = [s.number - 1 for s in items if s.kind is Kind.QUERY]
    if not anchors:
        return []
    blocks = focus_blocks(doc, anchors, weights)
    found: list[Candidate] = []
    # Weak evidence (a block holding little of the query) is left to the line-by-line choice.
    strong = [
        block
        for block in blocks
        if block.coverage >= STRONG_COVERAGE and block.rarest >= RARE_TERM_WEIGHT
    ]
    for rank, block in enumerate(strong):
        found.extend(_block_candidates(doc, block, FOCUS_WEIGHT - 2 * rank))
    return found


def _block_candidates(doc: Doc, block: Block, weight: float) -> list[Candidate]:
    size = sum(len(doc.lines[i]) + 1 for i in range(block.start, block.end))
    whole = Candidate(
        block.start,
        weight + 1,
        span=(block.start, block.end),
        share=FOCUS_SHARE,
        focused=True,
        source=Source.FOCUS,
    )
    if size <= FOCUS_WHOLE_CHARS:
        return [whole]
    head = Candidate(
        block.start,
        weight + 1,
        span=(block.start, block.start + 1),
        focused=True,
        source=Source.FOCUS,
    )
    inner = [
        Candidate(i, weight - 0.05 * rank, span=(i, i + 1), source=Source.FOCUS)
        for rank, i in enumerate(block.lines)
    ]
    return [head, *inner]
