"""The agent's intent, parsed once per job and passed down: its terms, the extreme it asks
for, the severity it names.

Every part of the shrink reads the same ``Query``; how terms are taken from the words an
agent writes is ``terms``, how much each is worth in one text is ``Doc.weights``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from tersify.text.sanitize import lowercase
from tersify.worker.shrink.terms import compound_terms, query_terms


class Measure(StrEnum):
    """What a line is ranked by when the query asks for an extreme."""

    SIZE = "size"
    TIME = "time"
    DURATION = "duration"
    COUNT = "count"


@dataclass(frozen=True, slots=True)
class Intent:
    """The query asks for the top (``largest``) or bottom of ``measure``."""

    measure: Measure
    largest: bool


_PHRASES: tuple[tuple[str, Measure, bool], ...] = (
    ("most recent", Measure.TIME, True),
    ("most space", Measure.SIZE, True),
    ("most disk", Measure.SIZE, True),
    ("most memory", Measure.SIZE, True),
    ("most time", Measure.DURATION, True),
    ("took longest", Measure.DURATION, True),
    ("last modified", Measure.TIME, True),
    ("recently", Measure.TIME, True),
)
_WORDS: dict[str, tuple[Measure, bool]] = {
    **dict.fromkeys(("largest", "biggest", "heaviest", "bulkiest"), (Measure.SIZE, True)),
    **dict.fromkeys(("smallest", "tiniest", "lightest"), (Measure.SIZE, False)),
    **dict.fromkeys(("newest", "latest", "youngest", "recent"), (Measure.TIME, True)),
    **dict.fromkeys(("oldest", "earliest", "stalest"), (Measure.TIME, False)),
    **dict.fromkeys(("slowest", "longest", "slower"), (Measure.DURATION, True)),
    **dict.fromkeys(("fastest", "quickest", "shortest"), (Measure.DURATION, False)),
    **dict.fromkeys(
        ("most", "top", "highest", "maximum", "max", "greatest"), (Measure.COUNT, True)
    ),
    **dict.fromkeys(("least", "fewest", "lowest", "minimum", "min"), (Measure.COUNT, False)),
}
_WORD = re.compile(r"[a-z]+")
_LEVELS = ("error", "warning", "note", "info", "style", "critical", "fatal", "debug", "hint")
_ASKED = re.compile(r"\b(errors?|warnings?|notes?|infos?|style|critical|fatal|debug|hints?)\b")


def intent(query: str | None) -> Intent | None:
    """The extreme ``query`` asks for, if any (phrases before single words)."""
    if not query:
        return None
    low = lowercase(query)
    for phrase, measure, largest in _PHRASES:
        if phrase in low:
            return Intent(measure, largest)
    for word in _WORD.findall(low):
        if word in _WORDS:
            return Intent(*_WORDS[word])
    return None


def asked_severity(query: str | None) -> str | None:
    """The severity the query names ("which warnings ...": ``warning``), if one."""
    if not query:
        return None
    found = _ASKED.search(lowercase(query))
    if found is None:
        return None
    word = found.group(1).rstrip("s") if found.group(1) != "style" else "style"
    return word if word in _LEVELS else None


@dataclass(frozen=True, slots=True)
class Query:
    """An agent's intent as the shrink reads it; ``Query.parse`` makes one, once per text."""

    text: str | None
    terms: tuple[str, ...]
    """The search terms, most specific first (``terms.query_terms``)."""
    compounds: tuple[str, ...]
    """The terms written with punctuation, matched whole (``terms.compound_terms``)."""
    intent: Intent | None
    severity: str | None

    def __bool__(self) -> bool:
        return bool(self.text)

    @staticmethod
    def parse(text: str | None) -> Query:
        """The parsed query of ``text`` (the same object for the same text, recently asked)."""
        return _parse(text or None)


NO_QUERY = Query(None, (), (), None, None)


@lru_cache(maxsize=256)
def _parse(text: str | None) -> Query:
    if not text:
        return NO_QUERY
    return Query(text, query_terms(text), compound_terms(text), intent(text), asked_severity(text))
