"""Very large outputs: keep the head, the tail and the salient middle before summarizing."""

from __future__ import annotations

from producer.classify.signals import Kind
from producer.contract import ToolType
from worker.shrink.matchcounts import top_counts
from worker.shrink.salience import Salient, find_salient, with_context
from worker.shrink.textcut import head_end, tail_start

# Past this size the per-line work of the summarizers would cost more than it shows: they read
# a narrowed copy (found with the fast whole-text scans) instead.
NARROW_ABOVE = 256 * 1024
_HEAD = 24_000
_TAIL = 24_000
_MIDDLE = 40_000


def narrow(text: str, tool_type: ToolType, query: str | None) -> str:
    """The head, the tail and the salient middle lines (with a little context) of ``text``."""
    head = head_end(text, _HEAD)
    tail = max(head, tail_start(text, _TAIL))
    room = _MIDDLE
    chosen = []
    if tool_type is ToolType.SEARCH_RESULTS:
        for start, end in top_counts(text, head, tail):
            chosen.append(Salient(0, start, end, text[start:end], Kind.VERDICT, 10.0))
            room -= end - start + 1
    for item in find_salient(text, tool_type, query):
        if item.start < head or item.end > tail or item.end - item.start + 1 > room:
            continue
        grown = with_context(text, item, 1, 2)
        if grown.start < head or grown.end > tail:
            grown = item
        cost = grown.end - grown.start + 1
        if cost > room:
            continue
        chosen.append(grown)
        room -= cost
        if room < 200:
            break
    chosen.sort(key=lambda s: s.start)
    pieces = [text[:head]]
    last = head
    for item in chosen:
        start = max(item.start, last)
        if start < item.end:
            pieces.append(text[start : item.end])
            last = item.end
    pieces.append(text[tail:])
    return "\n".join(piece.strip("\n") for piece in pieces if piece.strip("\n"))
