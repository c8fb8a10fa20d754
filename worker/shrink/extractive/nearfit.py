"""Outputs only a little over budget: drop the least useful lines and keep the rest verbatim."""

from __future__ import annotations

from producer.contract import ToolType
from producer.textcut import split_lines
from worker.shrink.extractive.regions import line_scores
from worker.shrink.salience import find_salient

# How far over the budget an output may be for line dropping to beat restructuring it.
NEAR_FIT = 1.3
GAP = "…"


def trim_lines(text: str, tool_type: ToolType, budget: int, query: str | None) -> str | None:
    """``text`` with its least useful lines left out ("…" where they were), or None if no fit."""
    lines = split_lines(text)
    if len(lines) < 5:
        return None
    value = [0.0] * len(lines)
    for index, score in line_scores(text, query).items():
        if index < len(value):
            value[index] += 10 * score
    for item in find_salient(text, tool_type, None):
        if item.number - 1 < len(value):
            value[item.number - 1] += item.weight
    order = sorted(range(len(lines)), key=lambda i: (value[i], -len(lines[i]), -i))
    dropped = [False] * len(lines)
    size = sum(len(line) + 1 for line in lines) - 1
    summary_room = len(f"[...{len(lines)} of {len(lines)} lines omitted...]") + 1
    count = 0
    for index in order:
        if size + summary_room <= budget:
            break
        before = index > 0 and dropped[index - 1]
        after = index + 1 < len(lines) and dropped[index + 1]
        size -= len(lines[index]) + 1
        if not before and not after:
            size += len(GAP) + 1
        elif before and after:
            size -= len(GAP) + 1
        dropped[index] = True
        count += 1
    if size + summary_room > budget:
        return None
    shown: list[str] = []
    for index, line in enumerate(lines):
        if not dropped[index]:
            shown.append(line)
        elif not shown or shown[-1] is not GAP:
            shown.append(GAP)
    shown.append(f"[...{count} of {len(lines)} lines omitted...]")
    return "\n".join(shown)
