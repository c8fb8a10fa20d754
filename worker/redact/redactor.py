"""Finding secrets in a text and replacing them with ``[secret:KIND#N]`` placeholders.

A ``Redactor`` lives for one job: the same value always gets the same placeholder, so a summary
can still say which line held which key, and the counts by kind feed the metrics. It never logs,
and its ``repr`` shows no value.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

from ahocorasick_rs import MATCHKIND_LEFTMOST_LONGEST, AhoCorasick, BytesAhoCorasick, Implementation

from tersify.contract import PendingSummary, SummaryResult
from tersify.settings import Scope
from tersify.worker.redact.rules import RULES, WORD_CHARS, Rule

PLACEHOLDER = re.compile(r"\[secret:[a-z0-9_]+#[0-9]+\]")


class Hit(NamedTuple):
    """One secret's place in a text and its kind."""

    start: int
    end: int
    kind: str
    generic: bool


def _automaton() -> tuple[AhoCorasick, BytesAhoCorasick, list[tuple[Rule, ...]]]:
    """Automata over every rule's anchors (for text, for ASCII bytes), the rules by anchor index.

    The DFA is the fastest of the crate's automata for a few hundred anchors (a few ms per MB).
    """
    by_anchor: dict[str, list[Rule]] = {}
    for rule in RULES:
        for anchor in rule.anchors:
            by_anchor.setdefault(anchor, []).append(rule)
    anchors = list(by_anchor)
    # Leftmost-longest matching reports one anchor per place: where a longer anchor starts with
    # a shorter one (``SECRET_KEY``, ``SECRET_``), the longer one also tries the shorter's rules.
    for anchor in anchors:
        for shorter in anchors:
            if shorter != anchor and anchor.startswith(shorter):
                by_anchor[anchor] += [r for r in by_anchor[shorter] if r not in by_anchor[anchor]]
    kind, dfa = MATCHKIND_LEFTMOST_LONGEST, Implementation.DFA
    automaton = AhoCorasick(anchors, matchkind=kind, implementation=dfa)
    ascii_automaton = BytesAhoCorasick(
        [anchor.encode() for anchor in anchors], matchkind=kind, implementation=dfa
    )
    return automaton, ascii_automaton, [tuple(by_anchor[anchor]) for anchor in anchors]


_AUTOMATON, _ASCII_AUTOMATON, _RULES_OF = _automaton()


def _anchors(text: str) -> list[tuple[int, int, int]]:
    """``(anchor index, start, end)`` of every anchor; ASCII text goes as bytes, a third faster."""
    if text.isascii():
        return _ASCII_AUTOMATON.find_matches_as_indexes(text.encode("ascii"))
    return _AUTOMATON.find_matches_as_indexes(text)


def _hit(rule: Rule, text: str, at: int) -> Hit | None:
    """The secret ``rule`` finds at the anchor at ``at``, if any."""
    match = rule.pattern.match(text, at)
    if match is None:
        return None
    group = (match.lastindex or 0) if rule.group < 0 else rule.group
    start, end = match.span(group)
    if start < 0 or end <= start:
        return None
    if rule.bounded and (
        (start > 0 and text[start - 1] in WORD_CHARS)
        or (end < len(text) and text[end] in WORD_CHARS)
    ):
        return None
    if rule.adjust is not None:
        span = rule.adjust(text, start, end)
        if span is None:
            return None
        start, end = span
    return Hit(start, end, rule.kind, rule.generic)


def find_secrets(text: str) -> list[Hit]:
    """Every secret in ``text``, in order, without overlaps (the longest, then the format rule)."""
    hits: list[Hit] = []
    for index, at, _end in _anchors(text):
        for rule in _RULES_OF[index]:
            hit = _hit(rule, text, at)
            if hit is not None:
                hits.append(hit)
    hits.sort(key=lambda hit: (hit.start, -hit.end, hit.generic))
    kept: list[Hit] = []
    for hit in hits:
        if kept and hit.start < kept[-1].end:
            continue
        if text[hit.start] == "[" and PLACEHOLDER.fullmatch(text, hit.start, hit.end):
            continue
        kept.append(hit)
    return kept


class Redactor:
    """One job's redaction: consistent placeholders, counts by kind, the scopes that apply."""

    def __init__(self, scopes: frozenset[Scope] = frozenset(Scope)) -> None:
        self.scopes = scopes
        self.counts: Counter[str] = Counter()
        self._placeholders: dict[str, str] = {}
        self._numbers: Counter[str] = Counter()

    def __repr__(self) -> str:
        return f"Redactor(scopes={sorted(self.scopes)}, counts={dict(self.counts)})"

    def applies(self, scope: Scope) -> bool:
        """Whether redaction is on for ``scope``."""
        return scope in self.scopes

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by its placeholder."""
        if not text:
            return text
        hits = find_secrets(text)
        if not hits:
            return text
        pieces: list[str] = []
        position = 0
        for hit in hits:
            pieces += [
                text[position : hit.start],
                self._placeholder(text[hit.start : hit.end], hit),
            ]
            position = hit.end
        pieces.append(text[position:])
        return "".join(pieces)

    def redact_for(self, scope: Scope, text: str) -> str:
        """``text`` redacted when ``scope`` is on, else as it is."""
        return self.redact(text) if scope in self.scopes else text

    def job(self, job: PendingSummary, scope: Scope) -> PendingSummary:
        """``job`` with every text a model sees (output, tool name, command, query) redacted
        when ``scope`` is on."""
        if scope not in self.scopes:
            return job
        command, query = job.command, job.query
        return job.model_copy(
            update={
                "output": self.redact(job.output),
                "tool_name": self.redact(job.tool_name),
                "command": command and self.redact(command),
                "query": query and self.redact(query),
            }
        )

    def result(self, result: SummaryResult, scope: Scope) -> SummaryResult:
        """``result`` with its text and failure detail redacted when ``scope`` is on.

        The detail of a model failure may quote the provider's answer: it is redacted whenever
        redaction is on at all.
        """
        if not self.scopes:
            return result
        detail = result.fallback_detail and self.redact(result.fallback_detail)
        text = self.redact(result.text) if scope in self.scopes else result.text
        if text == result.text and detail == result.fallback_detail:
            return result
        return result.model_copy(update={"text": text, "fallback_detail": detail})

    def _placeholder(self, value: str, hit: Hit) -> str:
        self.counts[hit.kind] += 1
        known = self._placeholders.get(value)
        if known is None:
            self._numbers[hit.kind] += 1
            known = f"[secret:{hit.kind}#{self._numbers[hit.kind]}]"
            self._placeholders[value] = known
        return known
