"""The agent's own statements of cause, choice, constraint, plan and finding, in its own words.

Every sentence of an assistant message (code, headings and very short ones aside) is read for
the shapes of a statement:

- a cause or a choice ("the root cause is", "the failure was", "the fix is", "instead of",
  "rather than", "decided", "leaving … untouched");
- a constraint, a plan or a reason ("will", "must", "should", "never", "keep", "avoid", "I'm
  changing …", "because", "due to");
- a finding ("`x` is not defined", "is pre-existing", "does not handle", "returns", "overrides");
- what it names: a file, a setting, a command or a value (a backquoted span, a path, a
  ``--flag``, a ``NAME=value``, an upper-case setting, a call, a number), and how often the
  agent names those things elsewhere in the conversation (what it keeps coming back to);
- against: narration of looking around ("let me check …", "I'll read …"), questions and
  hedges ("Wait, …", "Maybe …").

Beside the sentences of its messages, what the agent writes down in its actions is read too
(``written``: commit and pull-request messages, comments and prose its edits add), with a
feature of its own; such a statement counts when it states a plan, a fix or names something.

Those features are weighed by a logistic model fitted on the ``tune/`` conversations of the
compaction corpus (``tersify.worker.quality.compaction_fit``, which also reports how the
weights do on each agent left out of the fit). A sentence counts when it states a cause or a
choice, or a plan about something it names, or when the model finds it more likely a decision
than not; questions and narration never count. The best scores are kept, the latest first
among equals, after the best statement of each episode (the turns after one user request up to
the next, the newest first), so that every request's work keeps one.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tersify.chat.messages import Role, Turn
from tersify.worker.compaction.facts.actions import Action, actions
from tersify.worker.compaction.facts.asks import is_request
from tersify.worker.compaction.facts.written import written

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


_HEDGE = re.compile(
    r"^(?:wait|but|maybe|if|hmm|actually|perhaps|or|what if|let's see|so if)\b", re.IGNORECASE
)
_FIX = re.compile(
    r"\b(?:fix(?:es|ed)?|chang(?:e|es|ed|ing)|replac\w*|add(?:s|ed|ing)?|remov\w*|updat\w*|"
    r"renam\w*|switch\w*|bump\w*|set(?:s|ting)?|use|using|instead)\b",
    re.IGNORECASE,
)
_FINDING = re.compile(
    r"\b(?:is|are|was|were)\s+(?:not\s+|never\s+|only\s+|already\s+)?(?:defined|missing|called|"
    r"set|used|caused|pre-existing|the (?:cause|reason|problem|issue))|\b(?:does not|doesn't|"
    r"did not|didn't|never|only)\s+\w+|\b(?:returns?|calls?|lacks?|ignores?|overrides?|"
    r"inherits?)\b",
    re.IGNORECASE,
)
_MODAL = re.compile(
    r"\b(?:should|must|need(?:s)? to|has to|have to|shouldn't|mustn't|won't|will)\b", re.IGNORECASE
)
_LABEL = re.compile(r"^[\w '-]{2,30}:\s")
_FIRST = re.compile(r"\b(?:I|we)(?:'m|'ll|'d| will| am| would)?\b")
_NAMED = re.compile(r"`([^`\n]+)`|\b([\w.]+\([^)]*\))|((?:[\w.-]+/)+[\w.-]+)")

FEATURES = (
    "cause", "plan", "thing", "looking", "question", "hedge", "finding", "fix", "modal",
    "salience", "report", "position", "length", "first", "label", "written",
)  # fmt: skip
WEIGHTS = {
    "cause": 2.44, "plan": 0.68, "thing": 1.52, "looking": -0.8, "question": -0.21,
    "hedge": -1.17, "finding": 1.99, "fix": 1.84, "modal": 1.72, "salience": 0.29,
    "report": 0.63, "position": -0.59, "length": -1.21, "first": -0.15, "label": 0.14,
    "written": 1.5, "bias": -2.86,
}  # fmt: skip
"""Fitted by ``python -m tersify.worker.quality.compaction_fit tests/compaction-corpus/tune``;
``written`` (added later) chosen alone, the others kept: the middle of the values that cover the
most tune decision facts (1.0 to 2.0: 21/41, 20/41 at 0)."""


@dataclass(frozen=True, slots=True)
class Statement:
    """A sentence of an assistant message, the turn it is in, and its features."""

    index: int
    text: str
    features: tuple[float, ...]

    @property
    def counts(self) -> bool:
        """True for a statement of cause or choice, or of a plan about something named, or
        any other sentence the model scores as more likely a decision than not; never a
        question or narration of looking around."""
        named = dict(zip(FEATURES, self.features, strict=True))
        if named["question"] or named["looking"]:
            return False
        if named["written"] and (named["plan"] or named["fix"] or named["thing"]):
            return True  # a commit message or a comment an edit adds states why
        return bool(named["cause"] or (named["plan"] and named["thing"]) or self.score > 0)

    @property
    def score(self) -> float:
        """The fitted model's log-odds that this sentence states a decision."""
        weighed = sum(
            WEIGHTS[name] * value for name, value in zip(FEATURES, self.features, strict=True)
        )
        return WEIGHTS["bias"] + weighed


def _names(sentence: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in _NAMED.finditer(sentence)]


def _features(
    sentence: str, salience: float, report: bool, position: float, written: bool = False
) -> tuple[float, ...]:
    text = sentence.replace("\u2019", "'")  # a typographic apostrophe reads as one
    found = {
        "cause": bool(_STATES.search(text)),
        "plan": bool(_PLANS.search(text)),
        "thing": min(len(_THING.findall(text)), 3) / 3,
        "looking": bool(_LOOKING.search(text)),
        "question": text.rstrip().endswith("?"),
        "hedge": bool(_HEDGE.search(text)),
        "finding": bool(_FINDING.search(text)),
        "fix": bool(_FIX.search(text)),
        "modal": bool(_MODAL.search(text)),
        "salience": salience,
        "report": report,
        "position": position,
        "length": min(math.log(max(len(sentence), 2)) / math.log(_MAX_CHARS), 1.0),
        "first": bool(_FIRST.search(text)),
        "label": bool(_LABEL.match(text)),
        "written": written,
    }
    return tuple(float(found[name]) for name in FEATURES)


def sentences(text: str) -> list[str]:
    """The sentences of a message that may state something: code, headings and very short
    ones left out, list marks and ``THOUGHT:`` prefixes removed."""
    found: list[str] = []
    for sentence in _SENTENCE.split(_CODE.sub(" ", text)):
        if sentence.lstrip().startswith("#"):
            continue  # a heading names a topic, it states nothing
        plain = _PREFIX.sub("", sentence.strip(" -*>\t"))
        if len(plain) >= _MIN_CHARS:
            found.append(plain)
    return found


def statements(turns: Sequence[Turn], done: Sequence[Action] | None = None) -> list[Statement]:
    """Every sentence of the assistant's messages in ``turns``, and every statement its
    actions write down (``written``: commit messages, comments and prose its edits add), with
    their features."""
    said = [
        (index, sentence, not turn.calls, False)
        for index, turn in enumerate(turns)
        if turn.role is Role.ASSISTANT and turn.text.strip()
        for sentence in sentences(turn.text)
    ]
    found_actions = actions(turns) if done is None else done
    said += [(index, text, False, True) for index, text in written(found_actions)]
    counts = Counter(name for _, sentence, _, _ in said for name in set(_names(sentence)))
    top = math.log1p(max(counts.values(), default=1))
    found: list[Statement] = []
    for index, sentence, report, wrote in said:
        salience = max((math.log1p(counts[n]) / top for n in _names(sentence)), default=0.0)
        position = index / max(len(turns), 1)
        features = _features(sentence, salience, report, position, wrote)
        found.append(Statement(index, sentence, features))
    return found


def decisions(
    turns: Sequence[Turn], limit: int = 50, done: Sequence[Action] | None = None
) -> list[tuple[int, str]]:
    """The ``limit`` best statements (index, sentence) of those that count: the highest scores
    first, the most recent first among equals; each sentence once."""
    best: dict[str, Statement] = {}
    for statement in statements(turns, done):
        if not statement.counts:
            continue
        short = statement.text
        if len(short) > _MAX_CHARS:
            short = short[: _MAX_CHARS - 1] + "…"
        best.pop(short, None)
        best[short] = statement
    ranked = sorted(best.items(), key=lambda kv: (-round(kv[1].score, 6), -kv[1].index))
    episodes = [i for i, t in enumerate(turns) if is_request(t)]
    spread = _spread([(s.index, text) for text, s in ranked], episodes)
    return spread[:limit]


def _spread(ranked: list[tuple[int, str]], starts: Sequence[int]) -> list[tuple[int, str]]:
    """``ranked`` with the best statement of each episode (the turns after one user request up
    to the next) first, the newest episode first: each request's work keeps its best one."""
    groups: dict[int, list[tuple[int, str]]] = {}
    for item in ranked:
        episode = bisect.bisect_right(starts, item[0])
        groups.setdefault(episode, []).append(item)
    heads = [groups[k][0] for k in sorted(groups, reverse=True)]
    return [*heads, *(item for item in ranked if item not in heads)]
