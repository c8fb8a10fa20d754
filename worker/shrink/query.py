"""The agent's intent as search terms, and how strongly a piece of text matches it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from producer.classify.sanitize import lowercase

_WORD = re.compile(r"\w+")
# Runs of one script inside a CJK word: kanji, katakana and hangul carry meaning, hiragana is
# mostly particles ("の", "は") that match everywhere.
_CJK_RUN = re.compile(
    r"[\u4e00-\u9fff\u3400-\u4dbf]+|[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]+|[\uac00-\ud7af]+"
)
_HAS_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]")
_MAX_TERMS = 12

STOPWORDS = frozenset(
    (  # noqa: SIM905 - a word list reads better as one string
        "a about above after again all also am an and any are as at be been before being "
        "below between both but by can cannot could did do does doing done down during each "
        "either else ever every few find for from get gets give got had has have having he "
        "her here hers him his how i if in into is it its itself just let like list look many "
        "me might more most much must my need no nor not now of off on once one only or other "
        "our out over own per please same see she should show so some such tell than that the "
        "their them then there these they this those through to too under until up upon us "
        "use used uses using very want was way we were what whats when where whether which "
        "while who whom whose why will with within without would yes yet you your "
    ).split()
)


def _stem(word: str) -> str:
    """A light plural stemmer: 'errors' -> 'error', 'statuses' -> 'status', 'entries' -> 'entry'."""
    if len(word) <= 4 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "uses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def query_terms(query: str | None) -> tuple[str, ...]:
    """The distinct lower-case search terms of ``query``, most specific first, at most 12."""
    if not query:
        return ()
    terms: list[str] = []
    for word in _WORD.findall(lowercase(query)):
        if _HAS_CJK.search(word):
            terms.extend(run for run in _CJK_RUN.findall(word) if len(run) >= 2)
            latin = re.sub(r"[^\x00-\x7f]+", " ", word).split()
            terms.extend(w for w in latin if len(w) >= 3 and w not in STOPWORDS)
            continue
        # Numbers count from three digits on ("404", "8080"): shorter ones match everywhere.
        if word in STOPWORDS or (word.isdigit() and len(word) < 3):
            continue
        if len(word) < 3 and not (len(word) == 2 and any(c.isdigit() for c in word)):
            continue
        terms.append(_stem(word))
    unique = list(dict.fromkeys(terms))
    unique.sort(key=len, reverse=True)
    return tuple(unique[:_MAX_TERMS])


_FILE_NAME = re.compile(r"[\w-]+\.(?:[a-z][a-z0-9]{0,4})\b", re.IGNORECASE)


def file_name_terms(query: str | None) -> frozenset[str]:
    """Terms that come from file names in ``query`` ('Activate.ps1' gives 'activate', 'ps1')."""
    if not query:
        return frozenset()
    names = " ".join(
        m.group(0)
        for m in _FILE_NAME.finditer(query)
        if not m.group(0)[-1].isdigit() or "." in m.group(0)
    )
    return frozenset(query_terms(names))


@dataclass(frozen=True, slots=True)
class TermWeights:
    """How much each query term is worth in one text: rare terms count, ubiquitous ones do not."""

    weights: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        """The score of a piece of text holding every term."""
        return sum(self.weights.values())

    def __bool__(self) -> bool:
        return self.total > 0

    def score(self, low: str) -> float:
        """The share (0..1) of the query's weight found in lower-cased ``low``."""
        total = self.total
        if total <= 0:
            return 0.0
        return sum(w for term, w in self.weights.items() if term in low) / total

    def demoted(self, terms: frozenset[str], factor: float = 0.2) -> TermWeights:
        """The same weights with ``terms`` worth ``factor`` as much."""
        if not terms:
            return self
        return TermWeights({t: w * factor if t in terms else w for t, w in self.weights.items()})


def weigh_terms(
    terms: tuple[str, ...],
    low_text: str,
    units: int,
    count: Callable[[str], int] | None = None,
) -> TermWeights:
    """Inverse-frequency weights of ``terms`` in ``low_text`` made of ``units`` lines or records.

    ``count`` (default ``low_text.count``) lets a caller that already scanned for a term reuse
    what it found instead of paying another pass over the text.
    """
    units = max(units, 1)
    count_of = low_text.count if count is None else count
    weights: dict[str, float] = {}
    for term in terms:
        found = count_of(term)
        if found == 0:
            continue
        frequency = min(found, units)
        # A term on more than half of the units tells nothing apart.
        weight = math.log((units + 1) / frequency) if frequency * 2 <= units else 0.1
        weights[term] = max(weight, 0.1)
    return TermWeights(weights)
