"""Evidence: where the query's answer sits, found by what the text shows, not by the program.

Signals beside the line-by-line choice of ``salience``: the query's term weights over the
text, the blocks holding most of the query (``focus``), and the lines of the severity the query
asks for (``severity``).
"""

from __future__ import annotations

from tersify.text.signals import Kind
from tersify.worker.shrink.candidate import Candidate
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.focus import Block, focus_blocks
from tersify.worker.shrink.query import TermWeights, query_terms, weigh_terms
from tersify.worker.shrink.salience import Salient, units_of
from tersify.worker.shrink.severity import asked_severity, severity_lines

FOCUS_WEIGHT = 30.0
"""Worth of a focused block's lines: above any single matching line, below the closing line."""
FOCUS_WHOLE_CHARS = 900
"""A focused block up to this long is offered whole (at the local budgets)."""
FOCUS_SHARE = 0.5
STRONG_COVERAGE = 0.5
RARE_TERM_WEIGHT = 3.0
"""A block is focused on only for a query term this rare in it (on about 5 % of lines or less):
a block full of the query's common words is no better than the lines that hold them."""
SEVERITY_WEIGHT = 45.0
"""Worth of a line of the severity the query asks for, when such lines are the few."""


def query_weights(doc: Doc, query: str | None) -> TermWeights:
    """The query's term weights over ``doc``'s lines, computed once per document and query."""
    cache: dict[str | None, TermWeights] = doc.__dict__.setdefault("_weights", {})
    if query not in cache:
        cache[query] = weigh_terms(query_terms(query), doc.low, units_of(doc.text))
    return cache[query]


def severity_candidates(doc: Doc, query: str | None) -> list[Candidate]:
    """The lines of the severity the query names, when they are a minority (``severity``)."""
    wanted = asked_severity(query)
    if wanted is None:
        return []
    lines = severity_lines(doc, wanted)
    return [
        Candidate(i, SEVERITY_WEIGHT - 0.1 * rank, record_lines=3, focused=True)
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
        block.start, weight + 1, span=(block.start, block.end), share=FOCUS_SHARE, focused=True
    )
    if size <= FOCUS_WHOLE_CHARS:
        return [whole]
    head = Candidate(block.start, weight + 1, span=(block.start, block.start + 1), focused=True)
    inner = [
        Candidate(i, weight - 0.05 * rank, span=(i, i + 1)) for rank, i in enumerate(block.lines)
    ]
    return [head, *inner]
