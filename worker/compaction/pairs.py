"""Tool-pair safety: no tool call without its result, no result without its call.

Both APIs reject a history where an assistant's tool call is not answered by the messages right
after it, or where a result answers nothing ("tool_use ids were found without tool_result
blocks immediately after"). ``sanitize_slice`` trims a slice's edges before it is summarized;
``repair`` makes a whole history valid before it goes back to the caller.

"Answered" means answered in the run of result-carrying messages directly after the call: the
consecutive ``tool`` messages (OpenAI) or the following user message(s) with ``tool_result``
blocks (Anthropic). A result message that also carries text ends the run, since text between a
call and its results is exactly what the APIs refuse.
"""

from __future__ import annotations

from collections.abc import Sequence

from worker.compaction.messages import Turn


def _without(turns: list[Turn], ids: set[str]) -> list[Turn]:
    """``turns`` with every result answering one of ``ids`` removed (emptied turns dropped)."""
    out: list[Turn] = []
    for turn in turns:
        kept = turn.keep({c.id for c in turn.calls}, {r.call_id for r in turn.results} - ids)
        if kept is not None:
            out.append(kept)
    return out


def sanitize_slice(turns: Sequence[Turn]) -> list[Turn]:
    """``turns`` with orphaned tool results at the start and unanswered calls at the end removed.

    A leading result whose call lies before the slice is dropped. The last tool-calling message
    is dropped, with whatever partial results follow it, unless every one of its calls is
    answered inside the slice; a fully answered trailing call is kept.
    """
    out = list(turns)
    while out and out[0].results:
        first = out[0].keep({c.id for c in out[0].calls}, set())
        if first is not None:
            out[0] = first
            break
        out.pop(0)
    while True:
        last = next((i for i in range(len(out) - 1, -1, -1) if out[i].calls), None)
        if last is None:
            return out
        ids = {c.id for c in out[last].calls}
        if ids <= {r.call_id for t in out[last + 1 :] for r in t.results}:
            return out
        out = out[:last] + _without(out[last + 1 :], ids)


def repair(turns: Sequence[Turn]) -> list[Turn]:
    """A history in which every call is answered right after it and every result has its call.

    Only the broken calls and results go: an assistant message keeps its answered calls and its
    text, and a message is removed only when nothing is left of it.
    """
    answered: dict[int, set[str]] = {}
    kept_results: list[set[str]] = []
    caller: int | None = None  # the tool-calling turn whose result run is still open
    for index, turn in enumerate(turns):
        keep: set[str] = set()
        if caller is not None and turn.results:
            open_ids = {c.id for c in turns[caller].calls} - answered[caller]
            keep = {r.call_id for r in turn.results if r.call_id in open_ids}
            answered[caller] |= keep
        kept_results.append(keep)
        if turn.calls:
            caller = index
            answered[index] = set()
        elif not turn.results or turn.text.strip():
            caller = None
    out: list[Turn] = []
    for index, turn in enumerate(turns):
        kept = turn.keep(answered.get(index, set()), kept_results[index])
        if kept is not None:
            out.append(kept)
    return out
