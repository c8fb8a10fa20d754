"""Tool-pair safety: no tool call without its result, no result without its call.

Both APIs reject a history where an assistant's tool call is not answered by the messages right
after it, or where a result answers nothing ("tool_use ids were found without tool_result
blocks immediately after"). ``repair`` makes a whole history valid: compaction runs it on what it
hands back, and a backend can run it (``repair_messages``, ``tersify repair``, ``POST
/v1/repair``) on any history before sending it.

"Answered" means answered in the run of result-carrying messages directly after the call: the
consecutive ``tool`` messages (OpenAI) or the following user message(s) with ``tool_result``
blocks (Anthropic). A result message that also carries text ends the run, since text between a
call and its results is exactly what the APIs refuse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tersify.chat.compaction import Message, MessageShape
from tersify.chat.messages import Turn, parse


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


def repair_messages(
    messages: Sequence[Mapping[str, Any]], shape: MessageShape | None = None
) -> list[Message]:
    """``messages`` (OpenAI, Anthropic or metadata shape) with every broken tool pair removed.

    Valid messages come back as they were; raises ``InvalidJobError`` for malformed or mixed-shape
    input.
    """
    return [dict(t.raw) for t in repair(parse(messages, shape).turns)]
