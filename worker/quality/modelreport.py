"""The model evaluation's totals per model and prompt version, and its JSON form."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tersify.worker.quality.evaluation import keep_rate
from tersify.worker.quality.modeleval import CaseRun, Status


@dataclass(frozen=True, slots=True)
class ModelTally:
    """One model under one prompt version, over the corpus (facts over answered cases only)."""

    model: str
    prompt_version: str
    cases: int
    answered: int
    failed: int
    not_run: int
    cached: int
    kept: int
    total: int
    chars_out: int
    input_tokens: int
    output_tokens: int
    usd: float
    seconds: tuple[float, ...]

    @classmethod
    def of(cls, model: str, version: str, runs: Sequence[CaseRun]) -> ModelTally:
        """The totals of one model's and version's runs."""
        answered = [r for r in runs if r.status is Status.ANSWERED and r.answer is not None]
        called = [r.answer for r in runs if r.answer is not None]
        return cls(
            model=model,
            prompt_version=version,
            cases=len(runs),
            answered=len(answered),
            failed=sum(r.status is Status.FAILED for r in runs),
            not_run=sum(r.status in (Status.CEILING, Status.NOT_KEPT) for r in runs),
            cached=sum(r.cached for r in runs),
            kept=sum(r.kept for r in answered),
            total=sum(r.total for r in answered),
            chars_out=sum(len(r.answer.text) for r in answered if r.answer is not None),
            input_tokens=sum(a.input_tokens for a in called),
            output_tokens=sum(a.output_tokens for a in called),
            usd=sum(a.usd for a in called),
            seconds=tuple(a.seconds for a in called if a is not None),
        )

    @property
    def percent(self) -> float:
        """Facts kept over facts of the answered cases, in percent."""
        return 100.0 * keep_rate(self.kept, self.total)

    def as_json(self) -> dict[str, Any]:
        """The totals, JSON-ready (latency in seconds)."""
        return {
            "model": self.model,
            "prompt_version": self.prompt_version,
            "cases": self.cases,
            "answered": self.answered,
            "failed": self.failed,
            "not_run": self.not_run,
            "cached": self.cached,
            "kept": self.kept,
            "total": self.total,
            "percent": round(self.percent, 2),
            "chars_out": self.chars_out,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "usd": round(self.usd, 6),
            "seconds_mean": round(statistics.fmean(self.seconds), 4) if self.seconds else None,
            "seconds_p50": round(statistics.median(self.seconds), 4) if self.seconds else None,
            "seconds_max": round(max(self.seconds), 4) if self.seconds else None,
        }


def tallies(runs: Iterable[CaseRun]) -> list[ModelTally]:
    """One tally per model and prompt version, in the order they were run."""
    groups: dict[tuple[str, str], list[CaseRun]] = {}
    for run in runs:
        groups.setdefault((run.model, run.prompt_version), []).append(run)
    return [ModelTally.of(model, version, rows) for (model, version), rows in groups.items()]


def run_json(run: CaseRun) -> dict[str, Any]:
    """One case's run, JSON-ready."""
    answer = run.answer
    return {
        "case": run.case,
        "model": run.model,
        "prompt_version": run.prompt_version,
        "status": run.status.value,
        "cached": run.cached,
        "tool_type": run.tool_type.value,
        "expected_type": run.expected_type.value,
        "kept": run.kept,
        "total": run.total,
        "missing": list(run.missing),
        "chars_in": run.chars_in,
        "chars_out": len(answer.text) if answer and run.status is Status.ANSWERED else 0,
        "input_tokens": answer.input_tokens if answer else 0,
        "output_tokens": answer.output_tokens if answer else 0,
        "usd": round(answer.usd, 6) if answer else 0.0,
        "seconds": round(answer.seconds, 4) if answer else None,
        "fallback_reason": answer.fallback_reason if answer else None,
        "fallback_detail": answer.fallback_detail if answer else None,
        "text": answer.text if answer and run.status is Status.ANSWERED else None,
    }


def report_json(runs: Sequence[CaseRun], spent_usd: float, stopped: bool) -> dict[str, Any]:
    """The whole run as one JSON-ready object."""
    return {
        "method": "model",
        "spent_usd": round(spent_usd, 6),
        "stopped_on_budget": stopped,
        "models": [t.as_json() for t in tallies(runs)],
        "results": [run_json(r) for r in runs],
    }
