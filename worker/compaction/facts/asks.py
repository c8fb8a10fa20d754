"""The user's requests, wherever their envelope puts them, each condensed to what is its own.

A request is a user message with text (not a tool result, a wrapper or a text action's output),
or the user's words a tool result relays: the content of a tag that names the user's reply
(``<feedback>``, ``<answer>``, ``<user_message>``…), as task UIs send a reply to a question or
to a finished attempt. Its envelope is set aside by shape, whoever wrote it:

- tagged blocks that carry context rather than words (a tag naming an environment, context,
  reminder, system, metadata or details, such as ``<environment_details>``) are dropped;
- the tags around the rest (``<task>…</task>``) are removed and their content kept;
- lines that an earlier request already held (a template the client repeats) are dropped from
  the later ones, so each request is condensed to what it adds;
- a notice the client writes about the user in the third person ("The user interrupted the
  previous turn…") is not a request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tersify.chat.messages import Role, Turn
from tersify.worker.compaction.facts.actions import observations

_WRAPPERS = re.compile(
    r"^\s*(?:<(?:command-name|command-message|local-command-stdout|local-command-caveat|"
    r"system-reminder|returncode)|Please always provide EXACTLY ONE action|\[Request interrupted)"
)
_BLOCK = re.compile(r"<([A-Za-z][\w.-]{0,60})(?:\s[^<>]{0,200})?>(.*?)</\1\s*>", re.DOTALL)
_CONTEXT = frozenset(
    {"environment", "env", "context", "reminder", "system", "metadata", "details", "caveat"}
)
_REPLY = frozenset({"feedback", "answer", "reply"})
# A notice the client writes about the user, in the third person ("The user interrupted the
# previous turn…"): the user's own words never open that way.
_NOTICE = re.compile(
    r"^\W*the user (?:has |had |have )?(?:interrupted|denied|rejected|cancell?ed|aborted|stopped|"
    r"declined|approved|provided|responded|replied|answered|chose|selected|sent)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z]+")
_MAX_DEPTH = 4


@dataclass(frozen=True, slots=True)
class Ask:
    """One request: the turn it is in, its text as sent, and its own words, condensed."""

    index: int
    text: str
    own: str


def _words(tag: str) -> set[str]:
    """A tag name's words (``environment_details``, ``userMessage``, ``user-feedback``)."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", tag)
    return set(_WORD.findall(spaced.lower()))


def unwrapped(text: str) -> str:
    """``text`` less its envelope: context blocks dropped, the tags around the rest removed."""

    def block(match: re.Match[str]) -> str:
        return "" if _words(match.group(1)) & _CONTEXT else match.group(2)

    for _ in range(_MAX_DEPTH):
        text, changed = _BLOCK.subn(block, text)
        if not changed:
            break
    return text.strip()


def relayed(result: str) -> str:
    """The user's words a tool result relays: the content of its reply tags opening a line
    (``<feedback>``, ``<answer>``, ``<user_message>``), or "" when it relays none."""
    found = [
        m.group(2).strip()
        for m in _BLOCK.finditer(result)
        if (m.start() == 0 or result[m.start() - 1] == "\n")  # a tag that opens a line
        and ((words := _words(m.group(1))) & _REPLY or words == {"user", "message"})
    ]
    return "\n".join(f for f in found if f)


def is_request(turn: Turn) -> bool:
    """True for a user message that asks something: not a tool result, a wrapper, a notice
    about the user, or context blocks alone."""
    if turn.role is not Role.USER or turn.results or _WRAPPERS.match(turn.text):
        return False
    body = unwrapped(turn.text)
    return bool(body) and not _NOTICE.match(body)


def _normal(line: str) -> str:
    return " ".join(line.split()).lower()


def asks(turns: Sequence[Turn]) -> list[Ask]:
    """Every request in ``turns``, in order, each with its own words: the envelope set aside,
    the lines an earlier request held dropped; a request with nothing of its own is left out."""
    outputs = observations(turns)
    found: list[tuple[int, str, str]] = []
    for index, turn in enumerate(turns):
        if is_request(turn) and index not in outputs:
            found.append((index, turn.text.strip(), unwrapped(turn.text)))
        for result in turn.results:
            words = relayed(result.content)
            if words:
                found.append((index, words, unwrapped(words)))
    seen: set[str] = set()
    out: list[Ask] = []
    for index, text, body in found:
        lines = [line for line in body.splitlines() if line.strip()]
        own = [line for line in lines if _normal(line) not in seen]
        seen.update(_normal(line) for line in lines)
        condensed = " ".join(" ".join(own).split())
        if condensed:
            out.append(Ask(index, text, condensed))
    return out
