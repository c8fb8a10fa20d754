"""Focus: the few blocks of an output where the query's evidence is densest, read as units.

A line that matches the query says little alone; the block it sits in is what an agent reads:
a function's disassembly under its label, a certificate's entry, a JSON object, a paragraph.
A block is found from the text's own shape: an indented line belongs to the run of deeper
lines under the nearest less-indented line above it; a line at the margin to the run of
non-blank lines around it. Blocks are scored like BM25 documents (each query term counts once
per block by its inverse frequency over the output, long blocks damped), and the best few are
handed to the engine: each with its first line and the lines inside it that hold the query
terms its first line lacks, best first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.terms import TermWeights

MAX_ANCHORS = 200
"""Query lines looked at for their blocks (the strongest ones)."""
MAX_BLOCKS = 3
BLOCK_REACH = 60
"""Lines a block may reach above and below its anchor."""
MAX_BLOCK_LINES = 60
"""A longer run of lines is no unit one reads whole: it is left to the line-by-line choice."""
SUBTREE_ANCHORS = 30
SUBTREE_REACH = 600
"""Lines a subtree (what is indented under a line holding a query term) may span."""
INNER_LINES = 12
"""Lines inside a block offered besides its first one."""
_DAMP_LINES = 8
_KEEP_RATIO = 0.6  # a block scoring under this share of the best one is no focus


@dataclass(frozen=True, slots=True)
class Block:
    """A block of lines ``[start, end)`` worth reading whole, with its best lines first."""

    start: int
    end: int
    score: float
    coverage: float  # share (0..1) of the query's weight the block holds
    rarest: float  # the weight of the rarest query term it holds
    lines: tuple[int, ...]  # lines inside it holding query terms, best first


def focus_blocks(doc: Doc, anchors: list[int], weights: TermWeights) -> list[Block]:
    """The best blocks holding the query's evidence, best first (at most ``MAX_BLOCKS``)."""
    if not weights or not anchors:
        return []
    total = weights.total
    # A block holding a good part of the whole text is not a unit within it.
    longest = min(MAX_BLOCK_LINES, len(doc) // 4)
    seen: dict[tuple[int, int], Block] = {}
    for rank, anchor in enumerate(anchors[:MAX_ANCHORS]):
        span = block_of(doc, anchor)
        if span not in seen and 0 < span[1] - span[0] <= longest:
            seen[span] = _scored(doc, span, weights, total)
        # A line holding a query term that opens a subtree (a JSON key, a YAML parent, a
        # section) names what is under it: the subtree is a block however long it is.
        tree = subtree_of(doc, anchor) if rank < SUBTREE_ANCHORS else None
        if tree is not None and tree not in seen and tree[1] - tree[0] <= len(doc) // 2:
            seen[tree] = _scored(doc, tree, weights, total)
    ranked = sorted(seen.values(), key=lambda b: (-b.score, b.start))
    if not ranked:
        return []
    best = ranked[0].score
    kept: list[Block] = []
    for block in ranked:
        if block.score < _KEEP_RATIO * best or len(kept) >= MAX_BLOCKS:
            break
        if not any(_overlap(b, block) for b in kept):
            kept.append(block)
    return kept


def _overlap(a: Block, b: Block) -> bool:
    return a.start < b.end and b.start < a.end


def block_of(doc: Doc, index: int) -> tuple[int, int]:
    """The block holding line ``index``: under its opener when indented, else its paragraph
    (``(index, index)`` when no blank line bounds it within ``BLOCK_REACH``: no paragraph)."""
    lines = doc.lines
    own = doc.indent(index) if lines[index].strip() else 0
    if own > 0:
        opener = doc.parent(index, floor=max(0, index - BLOCK_REACH))
        if opener >= 0:
            return opener, _block_end(doc, opener, doc.indent(opener))
    start = index
    while start > 0 and lines[start - 1].strip():
        if index - start >= BLOCK_REACH:
            return index, index
        start -= 1
    end = index + 1
    while end < len(lines) and lines[end].strip():
        if end - index >= BLOCK_REACH:
            return index, index
        end += 1
    return start, end


def subtree_of(doc: Doc, index: int) -> tuple[int, int] | None:
    """Line ``index`` and what is indented under it, or None when nothing is."""
    lines = doc.lines
    own = doc.indent(index)
    for i in range(index + 1, min(len(lines), index + 3)):
        if lines[i].strip():
            if doc.indent(i) <= own:
                return None
            return index, _block_end(doc, index, own, reach=SUBTREE_REACH)
    return None


def _block_end(doc: Doc, opener: int, level: int, reach: int = 2 * BLOCK_REACH) -> int:
    """The first line after ``opener`` back at ``level`` or above (a closer at it included)."""
    lines = doc.lines
    stop = min(len(lines), opener + reach)
    for i in range(opener + 1, stop):
        line = lines[i]
        # Deeper than ``level`` for sure when its first ``level + 1`` chars are blank.
        if not line[: level + 1].strip() and line.strip():
            continue
        own = doc.indent(i)
        if own > level or not line.strip():
            continue
        if line.strip():
            closes = own == level and line.strip()[:1] in ")]}"
            return i + 1 if closes else _trimmed(doc, opener, i)
    return _trimmed(doc, opener, stop)


def _trimmed(doc: Doc, start: int, end: int) -> int:
    """``end`` moved back over the blank lines that close a block."""
    while end > start + 1 and not doc.lines[end - 1].strip():
        end -= 1
    return end


def _scored(doc: Doc, span: tuple[int, int], weights: TermWeights, total: float) -> Block:
    start, end = span
    lines = doc.lines
    text = "\n".join(lines[start:end]).lower()
    present = {t: w for t, w in weights.weights.items() if t in text}
    held = sum(present.values())
    size = end - start
    score = held / (1.0 + 0.25 * math.log2(max(1.0, size / _DAMP_LINES)))
    head = lines[start].lower()
    missing = [(t, w) for t, w in present.items() if t not in head]
    ranked: list[tuple[float, int]] = []
    for i in range(start + 1, end) if missing else ():
        line = lines[i].lower()
        gain = sum([w for t, w in missing if t in line])
        if gain > 0:
            ranked.append((-gain, i))
    ranked.sort()
    inner = tuple(i for _, i in ranked[:INNER_LINES])
    rarest = max(present.values(), default=0.0)
    return Block(start, end, score, held / total if total else 0.0, rarest, inner)
