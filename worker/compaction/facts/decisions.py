"""The agent's stated conclusions: root causes found and fixes chosen, in its own words.

A sentence of an assistant message counts when it states a cause or a choice ("the root cause
is", "the issue was", "the fix is", "I'll use …", "instead of …"); the latest few, shortened.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tersify.chat.messages import Role, Turn

_STATES = re.compile(
    r"\b(root cause|the (?:real |actual |underlying )?(?:issue|problem|bug|cause|culprit) "
    r"(?:is|was|here is)|the fix (?:is|was|will be)|fixed (?:it|this|the \w+) by|(?:I|we)(?:'ll| "
    r"will) (?:fix|change|go with|switch)|decided|decision|rather than|"
    r"this (?:means|explains|confirms)|pre-existing|unrelated to)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*])|\n+")
_PREFIX = re.compile(r"^(?:THOUGHT|DISCUSSION|Thought)\s*:\s*")
_MAX_CHARS = 220


def decisions(turns: Sequence[Turn], limit: int = 8) -> list[tuple[int, str]]:
    """The latest ``limit`` stated conclusions (index, sentence), the most recent first."""
    found: dict[str, int] = {}
    for index, turn in enumerate(turns):
        if turn.role is not Role.ASSISTANT or not turn.text.strip():
            continue
        text = re.sub(r"```.*?```", " ", turn.text, flags=re.DOTALL)  # code is not a statement
        for sentence in _SENTENCE.split(text):
            plain = _PREFIX.sub("", sentence.strip(" -*#>\t"))
            if len(plain) >= 25 and _STATES.search(plain) and not plain.endswith("?"):
                short = plain if len(plain) <= _MAX_CHARS else plain[: _MAX_CHARS - 1] + "…"
                found.pop(short, None)
                found[short] = index
    latest = sorted(found.items(), key=lambda kv: -kv[1])[:limit]
    return [(index, text) for text, index in latest]
