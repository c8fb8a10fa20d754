"""The agent's intent as search terms, and how strongly a piece of text matches it.

Terms are taken as agents write them: a dotted name (``safe.directory``), a path, a flag
(``--no-cache``), an arrow (``a->b``), a version (``2.31.0``), a quoted phrase, an emoji or a
CJK word is one term, matched whole; the plain words in it count as well, for a weaker match.
Words are matched inside identifiers ("heap" in ``MaxHeapSize``, "upload" in
``upload_max_filesize``), and a run of two or three words is also matched as the identifier it
would spell ("keep alive timeout" as ``keepAliveTimeout`` or ``keep_alive_timeout``); a
hyphenated term also matches without its hyphens ("SHA-256" in ``SHA256``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tersify.text.sanitize import lowercase

_WORD = re.compile(r"\w+")
# Runs of one script inside a CJK word: kanji, katakana and hangul carry meaning, hiragana is
# mostly particles ("の", "は") that match everywhere.
_CJK_RUN = re.compile(
    r"[\u4e00-\u9fff\u3400-\u4dbf]+|[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]+|[\uac00-\ud7af]+"
)
_HAS_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]")
_MAX_TERMS = 20
_MAX_COMPOUNDS = 6
_MAX_JOINED = 6
_MIN_JOINED = 7
_ASCII_WORD = re.compile(r"[a-z0-9_]+|\|")
_HYPHEN_INSIDE = re.compile(r"(?<=[a-z0-9])-(?=[a-z0-9])")
# A quoted phrase, a --flag, or a word joined to another by . / : -> :: = @ + # \ - (a name,
# a path, a version, an arrow); outer punctuation is not part of it.
_COMPOUND = re.compile(
    r"\"([^\"\n]{2,80})\"|`([^`\n]{1,80})`|(?<![\w'])'([^'\s][^'\n]{0,78}[^'\s])'(?![\w'])"
    r"|(?<![\w-])(--?[a-z][\w-]*(?:=[^\s,;]+)?)"
    r"|((?:[\w~$%@]+(?:->|::|=>|[./:\\=@+#-])+)+[\w~$%@*]+/?)",
    re.IGNORECASE,
)
# Symbols agents paste: emoji, arrows, box and check marks (Unicode "So" and "Sm" outside ASCII).
_SYMBOLS = re.compile(r"[\u2190-\u21ff\u2300-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]+")

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
    """A light stemmer: 'errors' → 'error', 'entries' → 'entry', 'deprecated' → 'deprecat'
    (found in 'deprecate' and 'deprecation'), 'running' → 'run', 'cached' → 'cach'."""
    if len(word) <= 4 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "uses")):
        return word[:-2]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            root = word[: -len(suffix)]
            # "running" → "runn" → "run"; "failed", "parsing", "installed" keep their roots.
            if root[-1] == root[-2] and root[-1] not in "ls":
                root = root[:-1]
            return root
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def compound_terms(query: str | None) -> tuple[str, ...]:
    """The terms of ``query`` written with punctuation or symbols, lower-cased, matched whole."""
    if not query:
        return ()
    low = lowercase(query)
    found: list[str] = []
    for match in _COMPOUND.finditer(low):
        term = next(group for group in match.groups() if group)
        term = term.strip(".,:;!?)(") if match.lastindex == 5 else term
        if len(term) >= 3 and not term.isdigit():
            found.append(term)
    found.extend(_SYMBOLS.findall(low))
    # "SHA-256" is also written "SHA256", "x86-64" also "x86_64": match the hyphen-free form.
    for term in list(found):
        if "-" in term.strip("-"):
            found.extend((_HYPHEN_INSIDE.sub("", term), _HYPHEN_INSIDE.sub("_", term)))
    return tuple(dict.fromkeys(found))[:_MAX_COMPOUNDS]


def joined_terms(query: str | None) -> tuple[str, ...]:
    """Runs of two or three query words spelled as one identifier ("maxheapsize",
    "max_heap_size"), for identifiers that join the words the agent wrote apart."""
    if not query:
        return ()
    found: list[str] = []
    run: list[str] = []
    low = lowercase(query)
    for term in compound_terms(query):
        low = low.replace(term, " | ")  # a dotted name or a path is a term of its own
    for word in [*_ASCII_WORD.findall(low), ""]:
        # An identifier the agent wrote ("parse_value") is a term already: it ends a run.
        if len(word) >= 2 and word not in STOPWORDS and word.isalpha():
            run.append(word)
            continue
        # A run of two or three words as a whole; a longer run as its three-word windows.
        windows = [run] if len(run) <= 3 else [run[i : i + 3] for i in range(len(run) - 2)]
        for parts in windows:
            if len(parts) >= 2 and len("".join(parts)) >= _MIN_JOINED:
                found.extend(("".join(parts), "_".join(parts)))
        run = []
    return tuple(dict.fromkeys(found))[:_MAX_JOINED]


def query_terms(query: str | None) -> tuple[str, ...]:
    """The distinct lower-case search terms of ``query``, most specific first, at most 12.

    Whole compound terms (``compound_terms``) come first; then the words, longest first.
    """
    if not query:
        return ()
    compounds = compound_terms(query)
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
    joined = tuple(t for t in joined_terms(query) if t not in compounds)
    unique = [t for t in dict.fromkeys(terms) if t not in compounds and t not in joined]
    unique.sort(key=len, reverse=True)
    return tuple(dict.fromkeys((*compounds, *unique, *joined)))[:_MAX_TERMS]


@dataclass(frozen=True, slots=True)
class TermWeights:
    """How much each query term is worth in one text: rare terms count, ubiquitous ones do not."""

    weights: dict[str, float] = field(default_factory=dict)
    total: float = field(init=False)
    """The score of a piece of text holding every term."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", sum(self.weights.values()))

    def __bool__(self) -> bool:
        return self.total > 0

    def held(self, low: str) -> tuple[float, float]:
        """The weight of the terms found in lower-cased ``low``, and the largest of them."""
        found = [w for term, w in self.weights.items() if term in low]
        return sum(found), max(found, default=0.0)

    def score(self, low: str) -> float:
        """The share (0..1) of the query's weight found in lower-cased ``low``."""
        total = self.total
        if total <= 0:
            return 0.0
        return self.held(low)[0] / total

    def rarity(self, low: str, units: int) -> float:
        """How rare (0..1) the rarest query term in lower-cased ``low`` is: 1 for a term found
        on one line (or record) of ``units``, near 0 for one found on most of them."""
        return rare_share(self.held(low)[1], units)


def rare_share(weight: float, units: int) -> float:
    """How rare (0..1) a term of ``weight`` is among ``units`` lines: 1 for one on one line."""
    return min(1.0, weight / math.log(max(units, 1) + 1))


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
    absent: list[str] = []
    for term in terms:
        # A term holding an absent one is absent too ("keepalive" when "keep" is nowhere).
        found = 0 if any(part in term for part in absent) else count_of(term)
        if found == 0:
            absent.append(term)
            continue
        frequency = min(found, units)
        # A term on more than half of the units tells nothing apart.
        weight = math.log((units + 1) / frequency) if frequency * 2 <= units else 0.1
        weights[term] = max(weight, 0.1)
    return TermWeights(weights)
