"""Type-aware head/tail truncation that also carries the salient lines of the omitted middle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from producer.classify.sanitize import sanitize
from producer.contract import ToolType
from worker.shrink.salience import Salient, find_salient
from worker.shrink.textcut import ELLIPSIS, clip, head_end, marker, tail_start

HEAD_RATIO: dict[ToolType, float] = {
    ToolType.FILE_CONTENT: 0.7,
    ToolType.SEARCH_RESULTS: 0.5,
    ToolType.DIRECTORY_LISTING: 0.3,
    ToolType.COMMAND_OUTPUT: 0.6,
    ToolType.STRUCTURED_DATA: 0.5,
    ToolType.WEB_CONTENT: 0.5,
}
# Share of the budget the carried middle lines may take; head and tail keep the rest.
CARRY_SHARE = 0.45
CARRY_END = "[...]"
_MIN_FRAME = 16


def head_tail(text: str, ratio: float, limit: int) -> str:
    """The plain cut: head and tail on line boundaries around a marker, at most ``limit`` chars."""
    try:
        return truncate_carrying(text, ratio, limit, ())
    except Exception:  # the baseline must answer on any input, like the fallback
        return _last_resort(text, limit)


def fallback_truncate(text: str, tool_type: ToolType, budget: int, query: str | None = None) -> str:
    """Sanitized head/tail by the type's ratio, carrying salient and query lines of the middle."""
    try:
        if budget <= 0:
            return ""
        clean = sanitize(text)
        if len(clean) <= budget:
            return clean
        items = find_salient(clean, tool_type, query)
        return truncate_carrying(clean, HEAD_RATIO.get(tool_type, 0.5), budget, items)
    except Exception:  # the fallback is the last resort of every job: it never raises
        return _last_resort(text, budget)


def _last_resort(text: object, limit: int) -> str:
    try:
        return clip(sanitize(str(text)), limit)
    except Exception:
        return ""


def render_item(item: Salient) -> str:
    """A carried line as shown: ``L12: text``, with ``(×N)`` when N identical lines were folded."""
    lines = item.text.rstrip().split("\n")
    shown = "\n".join(f"L{item.number + i}: {line.rstrip()}" for i, line in enumerate(lines))
    return f"{shown} (×{item.count})" if item.count > 1 else shown


def truncate_carrying(
    text: str,
    ratio: float,
    budget: int,
    items: Sequence[Salient],
    *,
    share: float = CARRY_SHARE,
) -> str:
    """Head/tail of ``text`` in at most ``budget`` chars, with ``items`` from the cut middle."""
    if budget <= 0:
        return ""
    if len(text) <= budget:
        return text
    frame = len(marker(len(text))) + 2
    if budget < frame + _MIN_FRAME:
        return clip(text, budget)
    ratio = min(max(ratio, 0.0), 1.0)
    cap = int(budget * share) if items else 0
    avail = budget - frame - cap
    head = head_end(text, int(avail * ratio))
    tail = tail_start(text, avail - head)
    chosen = _choose(text, items, head, max(tail, head), cap - len(CARRY_END) - 1)
    used = sum(len(r) + 1 for _, r in chosen) + (len(CARRY_END) + 1 if chosen else 0)
    avail = budget - frame - used
    head = head_end(text, int(avail * ratio))
    tail = max(head, tail_start(text, avail - head))
    # Head and tail grew into the room the carry left; lines they now show need no copy.
    block = [r for item, r in chosen if item.start >= head and item.end <= tail]
    parts = [text[:head], marker(tail - head), *block]
    if block:
        parts.append(CARRY_END)
    parts.append(text[tail:])
    result = "\n".join(parts)
    return result if len(result) <= budget else clip(result, budget)


def _choose(
    source: str, items: Sequence[Salient], head: int, tail: int, room: int
) -> list[tuple[Salient, str]]:
    """The heaviest items of the middle that fit in ``room`` chars, merged, in line order."""
    chosen: list[Salient] = []
    misses = 0
    for item in items:
        if room <= 8 or misses > 200:
            break
        if item.start < head or item.end > tail:
            continue
        cost = len(render_item(item)) + 1
        if cost > room:
            misses += 1
            continue
        chosen.append(item)
        room -= cost
    chosen.sort(key=lambda s: s.start)
    merged: list[Salient] = []
    for item in chosen:
        last = merged[-1] if merged else None
        if last is None or item.start >= last.end or item.count > 1 or last.count > 1:
            merged.append(item)
            continue
        if item.end > last.end:
            # Overlapping windows of one region: show their union once.
            body = source[last.start : item.end]
            lead = ELLIPSIS if last.text.startswith(ELLIPSIS) else ""
            trail = ELLIPSIS if item.text.endswith(ELLIPSIS) else ""
            merged[-1] = replace(last, end=item.end, text=lead + body + trail)
    return [(item, render_item(item)) for item in merged]
