"""Real model summaries scored on a corpus: ``tersify eval --method model``.

Each case goes through ``tersify.worker.summarize.summarizer.summarize`` with one route per
model, so it takes the very path a job takes: redaction, the type-aware request, the shared
circuit breaker and rate limit (``worker.model.routes``), retries within the deadline, and the
answer's checks (length, grounding). An answer the checks refuse, or a provider that fails
after its retries, is a failed case with its reason; it is not kept, so a rerun asks again.

Before each call its cost is estimated (every request's tokens in — each window's and the
merge's for an output read in windows — and each answer's token cap out, at the model's
``TERSIFY_MODEL_PRICES`` price); the run stops before a call that would take what
was spent past ``max_cost``. Answers are kept per case, model and prompt version
(``quality.answers``): a rerun is free, and a prompt version other than the current one is read
from what earlier runs (of the code that had it) kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from tersify.classify import classify
from tersify.contract import Method, PendingSummary, ToolType
from tersify.settings import Settings
from tersify.worker.model import pricing
from tersify.worker.model.calls import Route
from tersify.worker.quality.answers import AnswerStore, StoredAnswer, answer_key
from tersify.worker.quality.corpus import Case
from tersify.worker.quality.evaluation import missing
from tersify.worker.summarize.cache import PROMPT_VERSION
from tersify.worker.summarize.sending import estimate
from tersify.worker.summarize.summarizer import summarize


class Status(StrEnum):
    """What became of one case for one model and prompt version."""

    ANSWERED = "answered"
    FAILED = "failed"
    CEILING = "ceiling"
    NOT_KEPT = "not_kept"


@dataclass(frozen=True, slots=True)
class CaseRun:
    """One case, one model, one prompt version: the answer (if any) and the facts it kept."""

    case: str
    model: str
    prompt_version: str
    expected_type: ToolType
    tool_type: ToolType
    status: Status
    answer: StoredAnswer | None
    cached: bool
    kept: int
    total: int
    missing: tuple[str, ...]
    chars_in: int


def job_of(case: Case, settings: Settings) -> PendingSummary:
    """The job a producer would have submitted for ``case`` (an interactive one)."""
    return PendingSummary.build(
        deadline_seconds=settings.job_deadline_seconds,
        session_id="eval",
        tool_name=case.tool_name,
        command=case.command,
        output=case.output,
        query=case.query,
    )


def estimate_usd(case: Case, model: str, settings: Settings) -> float:
    """An upper bound on a case's cost: every request's tokens (each window's and the merge,
    for an output read in windows), and each answer's cap."""
    job = job_of(case, settings)
    sent = estimate(job, classify(case.tool_name, case.command, case.output), settings)
    return pricing.cost(settings, model, sent.input_tokens, sent.requests * sent.answer_cap)


class ModelEval:
    """Scores cases across models and prompt versions, within a budget, keeping answers."""

    def __init__(
        self,
        settings: Settings,
        store: AnswerStore,
        *,
        max_cost: float,
        on_done: Callable[[CaseRun], None] = lambda run: None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._max_cost = max_cost
        self._on_done = on_done
        self.spent_usd = 0.0
        self.stopped_on_budget = False

    def pending(self, cases: Sequence[Case], models: Sequence[str]) -> list[tuple[Case, str]]:
        """The (case, model) pairs of the current prompt with no kept answer: what costs."""
        return [
            (case, model)
            for model in models
            for case in cases
            if self._store.get(answer_key(case, model, PROMPT_VERSION, self._settings)) is None
        ]

    def run(
        self,
        cases: Sequence[Case],
        routes: Mapping[str, Route],
        prompt_versions: Sequence[str],
    ) -> list[CaseRun]:
        """Every case for every model (``routes``: model → its route) and prompt version."""
        runs = []
        for version in prompt_versions:
            for model, route in routes.items():
                for case in cases:
                    run = self._one(case, model, route, version)
                    runs.append(run)
                    self._on_done(run)
        return runs

    def _one(self, case: Case, model: str, route: Route, version: str) -> CaseRun:
        key = answer_key(case, model, version, self._settings)
        kept = self._store.get(key)
        if kept is not None:
            return scored(case, model, version, Status.ANSWERED, kept, cached=True)
        if version != PROMPT_VERSION:
            return scored(case, model, version, Status.NOT_KEPT, None, cached=False)
        if self.stopped_on_budget or self._over_budget(case, model):
            return scored(case, model, version, Status.CEILING, None, cached=False)
        answer = self._ask(case, model, route)
        self.spent_usd += answer.usd
        if answer.method != Method.LLM.value:
            return scored(case, model, version, Status.FAILED, answer, cached=False)
        self._store.put(key, answer)
        return scored(case, model, version, Status.ANSWERED, answer, cached=False)

    def _over_budget(self, case: Case, model: str) -> bool:
        if self.spent_usd + estimate_usd(case, model, self._settings) > self._max_cost:
            self.stopped_on_budget = True
        return self.stopped_on_budget

    def _ask(self, case: Case, model: str, route: Route) -> StoredAnswer:
        job = job_of(case, self._settings)
        tool_type = classify(case.tool_name, case.command, case.output)
        started = time.perf_counter()
        outcome = summarize(job, tool_type, [route], self._settings)
        seconds = time.perf_counter() - started
        tokens_in, tokens_out = outcome.input_tokens or 0, outcome.output_tokens or 0
        answered = outcome.model or model
        usd = pricing.cost(self._settings, answered, tokens_in, tokens_out)
        return StoredAnswer(
            text=outcome.text,
            method=outcome.method.value,
            model=answered,
            provider=outcome.provider,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            usd=usd,
            seconds=seconds,
            fallback_reason=outcome.fallback_reason.value if outcome.fallback_reason else None,
            fallback_detail=outcome.fallback_detail,
        )


def scored(
    case: Case,
    model: str,
    version: str,
    status: Status,
    answer: StoredAnswer | None,
    *,
    cached: bool,
) -> CaseRun:
    """A case's run, with the facts the answer kept (none without a model answer)."""
    text = answer.text if answer is not None and status is Status.ANSWERED else ""
    lost = missing(text, case.must_keep)
    return CaseRun(
        case=case.name,
        model=model,
        prompt_version=version,
        expected_type=case.expected_type,
        tool_type=classify(case.tool_name, case.command, case.output),
        status=status,
        answer=answer,
        cached=cached,
        kept=len(case.must_keep) - len(lost),
        total=len(case.must_keep),
        missing=tuple(lost),
        chars_in=len(case.output),
    )
