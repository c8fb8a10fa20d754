"""How a compaction summary's size limit is shared: the Active Task, a model's narrative, the facts.

The facts get at most half of what the banner and the Active Task leave; a model is asked to
keep its narrative within the rest, and whatever it leaves goes back to the facts, which never
get less than a floor (an answer that would leave them less is refused). The narrative is
checked against the facts: what it states verbatim is not repeated after it, what it dropped
is appended (the files changed always, whole).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tersify.chat.messages import Turn
from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.text import elide
from tersify.worker.compaction.facts.asks import unwrapped
from tersify.worker.compaction.facts.sections import (
    MIN_FACTS_CHARS,
    Section,
    render,
    render_size,
    sections,
)
from tersify.worker.compaction.summary import finish, narrative, open_requests, unwrap

Context = tuple[Sequence[Turn], Sequence[Turn]]
"""The whole conversation, and the messages kept verbatim beside the summary."""
_QUOTE_KEPT_CHARS = 400
_WHOLE = "Files Changed"  # the one list appended whole, whatever the narrative says


def quoted_requests(context: Context) -> list[str]:
    """The open requests as the Active Task quotes them: one kept verbatim beside the summary
    is shortened (its full text is right there), the others are quoted whole.
    """
    live, beside = context
    kept = {t.text.strip() for t in beside} | {unwrapped(t.text) for t in beside}
    return [
        f"{elide(r, _QUOTE_KEPT_CHARS)}\n(quoted in full in the messages kept beside this summary)"
        if r in kept and len(r) > _QUOTE_KEPT_CHARS
        else r
        for r in open_requests(live)
    ]


@dataclass(frozen=True, slots=True)
class Plan:
    """The facts of the middle and how the summary's size limit is shared with a model."""

    found: list[Section]
    requests: list[str]
    limit: int
    facts_chars: int  # what the facts get when the model keeps to its share
    answer_chars: int  # the model's share

    @classmethod
    def of(cls, middle: Sequence[Turn], context: Context, limit: int) -> Plan:
        """Half of what the banner and the Active Task leave goes to the facts, at most."""
        found = sections(middle)
        requests = quoted_requests(context)
        room = max(limit - len(finish("", requests)) - 4, 2 * MIN_FACTS_CHARS)
        facts = min(render_size(found, room), room // 2)
        return cls(found, requests, limit, facts, room - facts)

    def facts_for(self, body: str) -> str:
        """The facts ``body`` dropped, within what it leaves of the limit (refused under a
        floor): each section less the items the narrative states verbatim, the files changed
        whole."""
        room = self.answer_chars + self.facts_chars - len(unwrap(body)) - 2
        floor = min(self.facts_chars, MIN_FACTS_CHARS)
        if room < floor:
            detail = f"the model's summary has {len(unwrap(body))} chars; {self.answer_chars} fit"
            raise ProviderError(FallbackReason.OVERSIZED, detail)
        own = narrative(body)
        dropped = [s if s.heading == _WHOLE else s.without(own) for s in self.found]
        return render([s for s in dropped if s.lines], room)
