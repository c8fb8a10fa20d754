"""Where compaction cuts a conversation: a protected head, a middle to summarize, a protected tail.

The cuts start after the first ``protect_first`` and before the last ``protect_last`` messages
and only ever move outwards, so nothing protected is summarized and nothing is dropped: what a
cut passes over stays in the kept part, verbatim. They move until no tool pair spans them:

- the head grows over the results of its calls;
- the tail grows back over the call of any result it holds (and everything in between);
- a middle that starts with results (whose call cannot be in it) gives them to the head;
- a middle whose last tool-calling message is not answered in full inside it (an interrupted
  turn) gives that message, and everything after it, to the tail.

Each round moves a cut or ends the loop, so there are at most as many rounds as messages.
"""

from __future__ import annotations

from collections.abc import Sequence

from tersify.chat.messages import Turn


def cut(turns: Sequence[Turn], protect_first: int, protect_last: int) -> tuple[int, int]:
    """``(head_end, tail_start)``: the middle is ``turns[head_end:tail_start]``, no pair cut."""
    count = len(turns)
    head = min(protect_first, count)
    tail = max(head, count - protect_last)
    last_result = {r.call_id: i for i, t in enumerate(turns) for r in t.results}
    first_call = {c.id: i for i, t in reversed(list(enumerate(turns))) for c in t.calls}
    for _ in range(count + 1):
        moved = _widened(turns, head, tail, last_result, first_call)
        if moved == (head, tail):
            break
        head, tail = moved
    return head, tail


def _widened(
    turns: Sequence[Turn],
    head: int,
    tail: int,
    last_result: dict[str, int],
    first_call: dict[str, int],
) -> tuple[int, int]:
    """The cuts after one round of the rules; unchanged when no pair spans them."""
    reach = max((last_result.get(c.id, -1) for t in turns[:head] for c in t.calls), default=-1)
    head = max(head, reach + 1)
    tail = max(tail, head)
    start = min(
        (first_call.get(r.call_id, tail) for t in turns[tail:] for r in t.results), default=tail
    )
    tail = max(min(tail, start), head)
    if head < tail and turns[head].results:
        return head + 1, tail
    calling = next((i for i in range(tail - 1, head - 1, -1) if turns[i].calls), None)
    if calling is not None:
        answered = {r.call_id for t in turns[calling + 1 : tail] for r in t.results}
        if not {c.id for c in turns[calling].calls} <= answered:
            tail = calling
    return head, tail
