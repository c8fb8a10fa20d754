"""How much of a real conversation a compaction keeps, scored over a corpus of conversations.

A fact is kept when it occurs in what the compaction hands back: in a kept message (verbatim)
or in the summary. The facts that only the summary can carry are those no kept message holds;
"kept by the summary alone" is the share of those the summary holds. Beside it, the baseline:
the same facts looked for in the text of the last messages of the compacted part, as many as
fit in the summary's size limit (what "keep the last N messages" would carry in that room).
Each compaction is also checked for what must never break: every tool call answered right after
it, and every kept message equal to an input message, in order.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tersify.chat.compaction import CompactionJob, CompactionResult
from tersify.chat.messages import parse
from tersify.chat.pairs import repair
from tersify.settings import Settings
from tersify.worker.compaction.compact import compact
from tersify.worker.compaction.summary import strip_banner
from tersify.worker.model.calls import Route
from tersify.worker.model.guard import CallGuard
from tersify.worker.model.providers.base import Completion, ModelRequest
from tersify.worker.quality.conversations import CompactionCase, Fact, FactKind, normalize


@dataclass(frozen=True, slots=True)
class Score:
    """Kept over total, for one group of facts."""

    kept: int = 0
    total: int = 0

    def __add__(self, other: Score) -> Score:
        return Score(self.kept + other.kept, self.total + other.total)

    @property
    def percent(self) -> float:
        """Kept over total in percent (100 when there is nothing to keep)."""
        return 100.0 * self.kept / self.total if self.total else 100.0

    def __str__(self) -> str:
        return f"{self.kept}/{self.total} ({self.percent:.0f}%)"


@dataclass(frozen=True, slots=True)
class ConversationResult:
    """How one compaction of one conversation did."""

    name: str
    agent: str
    overall: dict[FactKind, Score]
    summary_only: dict[FactKind, Score]
    missing: tuple[str, ...]
    pairs_intact: bool
    verbatim: bool
    method: str
    tokens: tuple[int, int]
    summary_chars: int
    seconds: float
    reference: Score | None = None
    reference_ours: Score | None = None
    baseline: dict[FactKind, Score] = field(default_factory=dict)
    baseline_messages: int = 0

    def as_json(self) -> dict[str, Any]:
        """The result as a JSON-ready dict."""
        return {
            "name": self.name,
            "agent": self.agent,
            "method": self.method,
            "overall": _scores_json(self.overall),
            "summary_only": _scores_json(self.summary_only),
            "baseline": _scores_json(self.baseline),
            "baseline_messages": self.baseline_messages,
            "missing": list(self.missing),
            "pairs_intact": self.pairs_intact,
            "verbatim": self.verbatim,
            "tokens_before": self.tokens[0],
            "tokens_after": self.tokens[1],
            "summary_chars": self.summary_chars,
            "seconds": round(self.seconds, 4),
            "reference": _score_json(self.reference),
            "reference_ours": _score_json(self.reference_ours),
        }


def _score_json(score: Score | None) -> dict[str, int] | None:
    return None if score is None else {"kept": score.kept, "total": score.total}


def _scores_json(scores: Mapping[FactKind, Score]) -> dict[str, dict[str, int] | None]:
    return {kind.value: _score_json(score) for kind, score in scores.items()}


def _texts(messages: Iterable[Mapping[str, Any]]) -> str:
    """Everything a reader of ``messages`` sees: texts, call arguments, results, as one string."""
    parts: list[str] = []
    for turn in parse(list(messages)).turns:
        parts.append(turn.text)
        parts += [f"{c.name} {c.arguments}" for c in turn.calls]
        parts += [r.content for r in turn.results]
    return normalize("\n".join(parts))


def _arguments_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """Tool arguments also as their decoded JSON strings (a path inside quotes, unescaped)."""
    values: list[str] = []
    for turn in parse(list(messages)).turns:
        for call in turn.calls:
            values += [v for v in call.input.values() if isinstance(v, str)]
    return normalize("\n".join(values))


def _tally(facts: Iterable[Fact], present: Iterable[bool]) -> dict[FactKind, Score]:
    scores = {kind: Score() for kind in FactKind}
    for fact, hit in zip(facts, present, strict=True):
        scores[fact.kind] += Score(int(hit), 1)
    return scores


def _kept_in_order(
    output: Sequence[Mapping[str, Any]], source: Sequence[Mapping[str, Any]]
) -> bool:
    """True when every message of ``output`` is a message of ``source``, in the same order."""
    rest = iter(source)
    return all(any(m == s for s in rest) for m in output)


def score_compaction(
    case: CompactionCase, result: CompactionResult, seconds: float, limit: int = 6000
) -> ConversationResult:
    """Score one compaction ``result`` of ``case`` (``limit``: the summary's size limit, the
    room the baseline is given)."""
    summary = result.summary
    kept_messages = [m for m in result.messages if summary == "" or _text_of(m) != summary]
    kept_text = _texts(kept_messages) + "\n" + _arguments_text(kept_messages)
    summary_text = normalize(summary)
    in_kept = [f.found_in(kept_text) for f in case.facts]
    in_summary = [f.found_in(summary_text) for f in case.facts]
    only = [f for f, k in zip(case.facts, in_kept, strict=True) if not k]
    only_hits = [f.found_in(summary_text) for f in only]
    repaired = [dict(t.raw) for t in repair(case.conversation.turns)]
    base_text, base_count = baseline_text(case.messages, kept_messages, limit) if only else ("", 0)
    reference = reference_ours = None
    if case.reference is not None:
        reference_text = normalize(strip_banner(case.reference))
        reference = sum((Score(int(f.found_in(reference_text)), 1) for f in only), Score())
        reference_ours = Score(sum(only_hits), len(only))
    return ConversationResult(
        name=case.name,
        agent=case.agent,
        overall=_tally(case.facts, (a or b for a, b in zip(in_kept, in_summary, strict=True))),
        summary_only=_tally(only, only_hits),
        missing=tuple(
            f"{f.kind.value}: {f.any[0]}"
            for f, a, b in zip(case.facts, in_kept, in_summary, strict=True)
            if not (a or b)
        ),
        pairs_intact=_pairs_intact(result.messages),
        verbatim=_kept_in_order(kept_messages, repaired),
        method=result.method.value,
        tokens=(result.tokens_before, result.tokens_after),
        summary_chars=len(summary),
        seconds=seconds,
        reference=reference,
        reference_ours=reference_ours,
        baseline=_tally(only, (f.found_in(base_text) for f in only)),
        baseline_messages=base_count,
    )


def baseline_text(
    messages: Sequence[Mapping[str, Any]], kept: Sequence[Mapping[str, Any]], limit: int
) -> tuple[str, int]:
    """The text of the last messages not kept, as many whole messages as fit in ``limit``
    chars (at least one, cut to ``limit``), and how many they are."""
    parts: list[str] = []
    used = 0
    for message in reversed([m for m in messages if m not in kept]):
        text = _texts([message])
        if parts and used + len(text) > limit:
            break
        parts.append(text[:limit])
        used += len(text) + 1
    return "\n".join(reversed(parts)), len(parts)


def _text_of(message: Mapping[str, Any]) -> str:
    return parse([message]).turns[0].text


def _pairs_intact(messages: Sequence[Mapping[str, Any]]) -> bool:
    """True when the list needs no pair repair (every call answered, every result matched)."""
    turns = parse(list(messages)).turns
    return [t.raw for t in repair(turns)] == [t.raw for t in turns]


class FillerModel:
    """A stand-in model that writes as much narrative as it is allowed and states no fact.

    A compaction through it keeps only what tersify adds around any model's answer (the Active
    Task and the facts sections at the share a model leaves them): the floor of a model
    compaction, whatever the model.
    """

    name = "filler"
    model = "filler"

    def complete(self, request: ModelRequest, timeout: float) -> Completion:
        """Answer with filler text of the length the request allows."""
        allowed = _ALLOWED.search(request.user)
        size = int(allowed.group(1)) - 40 if allowed else 2000
        text = "## Goal\n" + ("lorem ipsum " * (size // 12 + 1))[:size]
        return Completion(text=text, model=self.model, input_tokens=0, output_tokens=1)

    def close(self) -> None:
        """Nothing to release."""

    def fitting_chars(self, request: ModelRequest) -> int | None:
        """No window: the request is never cut for it."""
        return None


_ALLOWED = re.compile(r"Keep the summary under (\d+) characters")


def compact_conversation(
    case: CompactionCase,
    settings: Settings,
    protect: tuple[int, int] = (2, 6),
    *,
    floor: bool = False,
) -> tuple[CompactionResult, float]:
    """Compact ``case`` without a model (or, with ``floor``, through ``FillerModel``)."""
    job = CompactionJob.build(
        deadline_seconds=600,
        session_id="eval",
        messages=case.messages,
        protect_first=protect[0],
        protect_last=protect[1],
    )
    routes = [Route(FillerModel(), CallGuard())] if floor else []
    started = time.perf_counter()
    result = compact(job, routes, settings)
    return result, time.perf_counter() - started


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """The compactions of one corpus directory, scored."""

    results: tuple[ConversationResult, ...]
    by_kind: dict[FactKind, Score] = field(init=False)
    only_by_kind: dict[FactKind, Score] = field(init=False)
    baseline_by_kind: dict[FactKind, Score] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_kind", _sum(r.overall for r in self.results))
        object.__setattr__(self, "only_by_kind", _sum(r.summary_only for r in self.results))
        object.__setattr__(self, "baseline_by_kind", _sum(r.baseline for r in self.results))

    def by_agent(self) -> dict[str, dict[str, Any]]:
        """Per agent: its cases, and the summary-only facts kept by tersify and by the baseline,
        in all and by kind."""
        agents: dict[str, list[ConversationResult]] = {}
        for result in self.results:
            agents.setdefault(result.agent, []).append(result)
        out: dict[str, dict[str, Any]] = {}
        for agent, results in sorted(agents.items()):
            only = _sum(r.summary_only for r in results)
            base = _sum(r.baseline for r in results)
            out[agent] = {
                "cases": len(results),
                "summary_only": _score_json(sum(only.values(), Score())),
                "summary_only_by_kind": _scores_json(only),
                "baseline": _score_json(sum(base.values(), Score())),
                "baseline_by_kind": _scores_json(base),
            }
        return out

    def as_json(self) -> dict[str, Any]:
        """The report as one JSON-ready dict."""
        refs = [r for r in self.results if r.reference is not None]
        return {
            "cases": len(self.results),
            "agents": sorted({r.agent for r in self.results}),
            "overall": _score_json(sum(self.by_kind.values(), Score())),
            "summary_only": _score_json(sum(self.only_by_kind.values(), Score())),
            "baseline": _score_json(sum(self.baseline_by_kind.values(), Score())),
            "by_kind": _scores_json(self.by_kind),
            "summary_only_by_kind": _scores_json(self.only_by_kind),
            "baseline_by_kind": _scores_json(self.baseline_by_kind),
            "by_agent": self.by_agent(),
            "pairs_intact": sum(r.pairs_intact for r in self.results),
            "verbatim": sum(r.verbatim for r in self.results),
            "reference": _score_json(sum((r.reference or Score() for r in refs), Score())),
            "reference_ours": _score_json(
                sum((r.reference_ours or Score() for r in refs), Score())
            ),
            "max_summary_chars": max((r.summary_chars for r in self.results), default=0),
            "results": [r.as_json() for r in self.results],
        }


def _sum(groups: Iterable[Mapping[FactKind, Score]]) -> dict[FactKind, Score]:
    total = {kind: Score() for kind in FactKind}
    for group in groups:
        for kind, score in group.items():
            total[kind] += score
    return total


def evaluate_conversations(
    cases: Iterable[CompactionCase],
    settings: Settings,
    protect: tuple[int, int] = (2, 6),
    *,
    floor: bool = False,
) -> CompactionReport:
    """Compact and score every case (``floor``: through the filler model)."""
    results = []
    for case in cases:
        result, seconds = compact_conversation(case, settings, protect, floor=floor)
        limit = settings.compaction_summary_max_chars
        results.append(score_compaction(case, result, seconds, limit))
    return CompactionReport(tuple(results))
