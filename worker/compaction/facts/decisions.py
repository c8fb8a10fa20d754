"""The agent's own statements of cause, choice, constraint and plan, in its own words.

A sentence of an assistant message counts when it states

- a cause or a choice ("the root cause is", "the failure was", "the fix is", "instead of",
  "rather than", "decided", "leaving … untouched"), or
- a constraint, a plan or a reason about something it names: a file, a setting, a command or a
  value (a backquoted span, a path, a ``--flag``, a ``NAME=value``, an upper-case setting, a
  call, a number) together with what will or must be done or why ("will", "must", "should",
  "never", "keep", "avoid", "I'm changing …", "because", "due to").

Narration of looking around ("let me check …", "I'll read …") and questions never count, nor
does code. Causes and choices rank before plans, the latest first within each.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tersify.chat.messages import Role, Turn

_STATES = re.compile(
    r"\b(root cause|the (?:real |actual |underlying |\w+ )?(?:issue|problem|bug|cause|culprit|"
    r"failure|error) (?:is|was|here is)|the fix (?:is|was|will be)|fixed (?:it|this|the \w+) by|"
    r"(?:I|we)(?:'ll| will) (?:fix|change|go with|switch)|decided|decision|rather than|instead of|"
    r"this (?:means|explains|confirms)|pre-existing|unrelated to|(?:leaving|leave|left|keeping) "
    r"[^.]{0,60}\b(?:untouched|unchanged|as (?:is|they are|it is))|the approach|the plan is)\b",
    re.IGNORECASE,
)
_PLANS = re.compile(
    r"\b(?:will|won't|must|mustn't|should|shouldn't|need(?:s)? to|has to|have to|going to|"
    r"never|always|avoid|keep|do not|don't|prefer|because|caused by|due to|which is why|"
    r"that's why|this is why|"
    r"(?:I|we)(?:'m| am|'re| are) (?:updating|changing|adding|removing|replacing|renaming|"
    r"moving|switching|setting|using|making|bumping|dropping|reverting|deleting|creating|"
    r"writing|fixing|refactoring|splitting|leaving))\b|'ll\b",
    re.IGNORECASE,
)
_LOOKING = re.compile(
    r"^(?:(?:now|next|first|then|ok(?:ay)?|great|good|perfect|alright)[,!.]?\s+)*"
    r"(?:let me|let's|let us|(?:I|we)(?:'ll| will| am going to|'m going to) "
    r"(?:check|look|read|inspect|examine|view|see|explore|search|find|investigate|understand|"
    r"open|review|verify|confirm|try|run|start|first|now|also|test|take|get|dig|grep|scan|"
    r"trace|compare|pull|fetch|reproduce|query|list|locate|identify))\b",
    re.IGNORECASE,
)
_THING = re.compile(
    r"`[^`\n]+`"  # a backquoted name, command or value
    r"|(?<![\w/])(?:[\w.@-]+/)+[\w.@-]+"  # a path
    r"|\b[\w-]{2,}\.[A-Za-z][\w]{0,5}\b(?!\.)"  # a file name
    r"|(?<!\w)--?[a-zA-Z][\w-]*"  # a flag
    r"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"  # a setting
    r"|\b\w+=\S+"  # an assignment
    r"|\b\w+\([^)]*\)"  # a call
    r"|\b\d+(?:\.\d+)*\b"  # a value
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"'(])|\n+")
_PREFIX = re.compile(r"^(?:THOUGHT|DISCUSSION|Thought|Reasoning|Plan)\s*:\s*")
_CODE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_MAX_CHARS = 220
_MIN_CHARS = 25


def _strength(sentence: str) -> int:
    """2: a cause or a choice; 1: a constraint or plan about something named; 0: neither."""
    sentence = sentence.replace("\u2019", "'")  # a typographic apostrophe reads as one
    if sentence.endswith("?") or _LOOKING.search(sentence):
        return 0
    if _STATES.search(sentence):
        return 2
    if _PLANS.search(sentence) and _THING.search(sentence):
        return 1
    return 0


def statements(text: str) -> list[tuple[int, str]]:
    """(strength, sentence) for each statement of ``text`` that counts, in order."""
    found: list[tuple[int, str]] = []
    text = _CODE.sub(" ", text)  # code is not a statement
    for sentence in _SENTENCE.split(text):
        if sentence.lstrip().startswith("#"):
            continue  # a heading names a topic, it states nothing
        plain = _PREFIX.sub("", sentence.strip(" -*>\t"))
        if len(plain) < _MIN_CHARS:
            continue
        strength = _strength(plain)
        if strength:
            short = plain if len(plain) <= _MAX_CHARS else plain[: _MAX_CHARS - 1] + "…"
            found.append((strength, short))
    return found


def decisions(turns: Sequence[Turn], limit: int = 12) -> list[tuple[int, str]]:
    """The ``limit`` best statements (index, sentence): causes and choices first, then plans,
    the most recent first within each."""
    found: dict[str, tuple[int, int]] = {}
    for index, turn in enumerate(turns):
        if turn.role is not Role.ASSISTANT or not turn.text.strip():
            continue
        for strength, sentence in statements(turn.text):
            found.pop(sentence, None)
            found[sentence] = (strength, index)
    ranked = sorted(found.items(), key=lambda kv: (-kv[1][0], -kv[1][1]))[:limit]
    return [(index, text) for text, (_, index) in ranked]
