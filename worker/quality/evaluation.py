"""How well a shrink method keeps what matters, scored over a corpus of real tool outputs."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

from tersify.classify import classify
from tersify.contract import PendingSummary, ToolType
from tersify.settings import Settings
from tersify.worker.quality.bm25 import bm25_lines
from tersify.worker.quality.corpus import Case
from tersify.worker.quality.positions import at_edge
from tersify.worker.shrink import extract, fallback_truncate, head_tail, kind_of, mapped_lines
from tersify.worker.summarize.sending import opening_prompts

READ_MAX_CHARS = 400_000
"""What a job reads in all by default (``TERSIFY_MODEL_READ_MAX_CHARS``)."""

_LINE_LABEL = re.compile(r"^\d+(?:#[0-9a-f]{2})?\|", re.MULTILINE)


class EvalMethod(StrEnum):
    """A way to shrink an output that ``tersify eval`` can score."""

    HEAD = "head"
    HEAD_TAIL = "head-tail"
    FALLBACK = "fallback"
    EXTRACTIVE = "extractive"
    RULES = "rules"  # the extractive summary with the rules' hand-set worths, no ranker
    MODEL_INPUT = "model-input"
    BM25 = "bm25"
    MODEL = "model"  # real model answers: scored by ``quality.modeleval``, not shrunk here


def kept(output: str, must_keep: Sequence[str]) -> int:
    """How many of the ``must_keep`` substrings occur verbatim in ``output`` (CRLF read as LF)."""
    return len(must_keep) - len(missing(output, must_keep))


def missing(output: str, must_keep: Sequence[str]) -> list[str]:
    """The ``must_keep`` substrings absent from ``output`` (CRLF read as LF)."""
    text = output.replace("\r\n", "\n")
    return [item for item in must_keep if item.replace("\r\n", "\n") not in text]


def keep_rate(kept_total: int, must_total: int) -> float:
    """Kept items over all items, 1.0 when there was nothing to keep."""
    return kept_total / must_total if must_total else 1.0


def shrink(
    case: Case,
    tool_type: ToolType,
    method: EvalMethod,
    budget: int,
    max_summary_chars: int = 800,
    read_max_chars: int = READ_MAX_CHARS,
) -> str:
    """The text ``method`` makes of ``case`` at ``budget`` chars; for model-input, the request."""
    if method is EvalMethod.HEAD:
        return case.output[:budget]
    if method is EvalMethod.HEAD_TAIL:
        return head_tail(case.output, kind_of(tool_type).head_ratio, budget)
    if method is EvalMethod.FALLBACK:
        return fallback_truncate(case.output, tool_type, budget, case.query)
    if method is EvalMethod.EXTRACTIVE:
        return extract(case.output, tool_type, budget, case.query)
    if method is EvalMethod.RULES:
        return extract(case.output, tool_type, budget, case.query, ranker=None)
    if method is EvalMethod.BM25:
        return bm25_lines(case.output, case.query, budget)
    if method is EvalMethod.MODEL:
        raise ValueError("model answers are scored by tersify.worker.quality.modeleval")
    return model_input(case, tool_type, budget, max_summary_chars, read_max_chars)[0]


def model_input(
    case: Case,
    tool_type: ToolType,
    window_chars: int,
    max_summary_chars: int = 800,
    read_max_chars: int = READ_MAX_CHARS,
) -> tuple[str, int]:
    """The union of every request a job sends before any answer (its one request, or every
    window's), read through the line numbers, and the characters those requests hold."""
    job = PendingSummary.build(
        deadline_seconds=60,
        session_id="eval",
        tool_name=case.tool_name,
        command=case.command,
        output=case.output,
        query=case.query,
    )
    settings = _settings(window_chars, max_summary_chars, read_max_chars)
    prompts = opening_prompts(job, tool_type, settings)
    # A fact the model never sees cannot be in its answer: score everything that is sent,
    # read through the line numbers in front of each line (a fact may span lines).
    sent = [p.request.system + "\n" + p.request.user for p in prompts]
    scored = "\n".join(
        p.request.system + "\n" + _LINE_LABEL.sub("", p.request.user) for p in prompts
    )
    return scored, sum(map(len, sent))


@cache
def _settings(window_chars: int, max_summary_chars: int, read_max_chars: int) -> Settings:
    return Settings(
        model_window_chars=window_chars,
        model_read_max_chars=read_max_chars,
        max_summary_chars=max_summary_chars,
    )


@dataclass(frozen=True, slots=True)
class CaseResult:
    """How one method did on one case."""

    name: str
    expected_type: ToolType
    tool_type: ToolType
    kept: int
    total: int
    missing: tuple[str, ...]
    chars_in: int
    chars_out: int
    seconds: float
    family: str = ""
    middle_kept: int = 0
    middle_total: int = 0
    mapped: int = 0
    """Missed facts whose line lies in a region the summary's map names (``leftout``)."""

    def as_json(self) -> dict[str, Any]:
        """The result as a JSON-ready dict."""
        return {
            "name": self.name,
            "family": self.family,
            "tool_type": self.tool_type.value,
            "expected_type": self.expected_type.value,
            "classified_right": self.tool_type is self.expected_type,
            "kept": self.kept,
            "total": self.total,
            "missing": list(self.missing),
            "chars_in": self.chars_in,
            "chars_out": self.chars_out,
            "seconds": round(self.seconds, 6),
            "middle_kept": self.middle_kept,
            "middle_total": self.middle_total,
            "missing_mapped": self.mapped,
        }


@dataclass(frozen=True, slots=True)
class Tally:
    """Totals over a group of case results."""

    cases: int
    kept: int
    total: int
    classification_correct: int
    chars_in: int
    chars_out: int
    seconds: float
    middle_kept: int = 0
    middle_total: int = 0
    mapped: int = 0

    @classmethod
    def of(cls, results: Iterable[CaseResult]) -> Tally:
        """The totals of ``results``."""
        rows = list(results)
        return cls(
            cases=len(rows),
            kept=sum(r.kept for r in rows),
            total=sum(r.total for r in rows),
            classification_correct=sum(r.tool_type is r.expected_type for r in rows),
            chars_in=sum(r.chars_in for r in rows),
            chars_out=sum(r.chars_out for r in rows),
            seconds=sum(r.seconds for r in rows),
            middle_kept=sum(r.middle_kept for r in rows),
            middle_total=sum(r.middle_total for r in rows),
            mapped=sum(r.mapped for r in rows),
        )

    @property
    def percent(self) -> float:
        """Share of must-keep items kept, in percent (100 when there were none)."""
        return 100.0 * keep_rate(self.kept, self.total)

    @property
    def middle_percent(self) -> float:
        """Share of the facts in the middle (beyond ``EDGE_CHARS`` of both ends) kept."""
        return 100.0 * keep_rate(self.middle_kept, self.middle_total)

    @property
    def edge_percent(self) -> float:
        """Share of the facts near an edge (within ``EDGE_CHARS`` of an end) kept."""
        edge_kept = self.kept - self.middle_kept
        return 100.0 * keep_rate(edge_kept, self.total - self.middle_total)

    @property
    def ratio(self) -> float:
        """Output chars over input chars."""
        return self.chars_out / self.chars_in if self.chars_in else 0.0

    @property
    def ms_per_case(self) -> float:
        """Mean shrink time of one case, in milliseconds."""
        return 1000.0 * self.seconds / self.cases if self.cases else 0.0

    def as_json(self) -> dict[str, Any]:
        """The totals as a JSON-ready dict."""
        return {
            "cases": self.cases,
            "kept": self.kept,
            "total": self.total,
            "percent": round(self.percent, 2),
            "classification_correct": self.classification_correct,
            "chars_in": self.chars_in,
            "chars_out": self.chars_out,
            "ratio": round(self.ratio, 4),
            "seconds": round(self.seconds, 6),
            "ms_per_case": round(self.ms_per_case, 3),
            "middle": _part(self.middle_kept, self.middle_total),
            "edge": _part(self.kept - self.middle_kept, self.total - self.middle_total),
            "missing_mapped": _part(self.mapped, self.total - self.kept),
        }


def _part(kept_count: int, total: int) -> dict[str, Any]:
    return {
        "kept": kept_count,
        "total": total,
        "percent": round(100.0 * keep_rate(kept_count, total), 2),
    }


@dataclass(frozen=True, slots=True)
class Report:
    """One method scored over a corpus: per case, per expected type and overall."""

    method: EvalMethod
    budget: int
    results: tuple[CaseResult, ...]

    @property
    def overall(self) -> Tally:
        """Totals over every case."""
        return Tally.of(self.results)

    def by_type(self) -> dict[ToolType, Tally]:
        """Totals per expected type, in the enum's order, types without cases left out."""
        return {
            tool_type: Tally.of(r for r in self.results if r.expected_type is tool_type)
            for tool_type in ToolType
            if any(r.expected_type is tool_type for r in self.results)
        }

    def as_json(self) -> dict[str, Any]:
        """The report as one JSON-ready dict."""
        return {
            "method": self.method.value,
            "budget": self.budget,
            **self.overall.as_json(),
            "by_type": {t.value: tally.as_json() for t, tally in self.by_type().items()},
            "results": [r.as_json() for r in self.results],
        }

    def summary_line(self) -> str:
        """The one-line verdict: ``kept K/N (P%) ...``."""
        t = self.overall
        return (
            f"kept {t.kept}/{t.total} ({t.percent:.1f}%) method={self.method.value} "
            f"budget={self.budget} classified={t.classification_correct}/{t.cases} "
            f"chars_out={t.chars_out} ratio={t.ratio:.3f} ms_per_case={t.ms_per_case:.1f} "
            f"middle={t.middle_kept}/{t.middle_total} ({t.middle_percent:.1f}%) "
            f"edge={t.kept - t.middle_kept}/{t.total - t.middle_total} ({t.edge_percent:.1f}%) "
            f"missing_mapped={t.mapped}/{t.total - t.kept}"
        )


def evaluate_case(
    case: Case,
    method: EvalMethod,
    budget: int,
    max_summary_chars: int = 800,
    read_max_chars: int = READ_MAX_CHARS,
) -> CaseResult:
    """Classify ``case`` as the worker would, shrink it by that type and score the result
    (for model-input, ``chars_out`` is every character the requests send)."""
    tool_type = classify(case.tool_name, case.command, case.output)
    started = time.perf_counter()
    if method is EvalMethod.MODEL_INPUT:
        text, sent = model_input(case, tool_type, budget, max_summary_chars, read_max_chars)
    else:
        text = shrink(case, tool_type, method, budget, max_summary_chars)
        sent = len(text)
    seconds = time.perf_counter() - started
    lost = missing(text, case.must_keep)
    middle = [item for item in case.must_keep if not at_edge(case.output, item)]
    return CaseResult(
        name=case.name,
        expected_type=case.expected_type,
        tool_type=tool_type,
        kept=len(case.must_keep) - len(lost),
        total=len(case.must_keep),
        missing=tuple(lost),
        chars_in=len(case.output),
        chars_out=sent,
        seconds=seconds,
        family=case.family,
        middle_kept=sum(1 for item in middle if item not in lost),
        middle_total=len(middle),
        mapped=sum(1 for item in lost if in_regions(case.output, item, mapped_lines(text))),
    )


def in_regions(output: str, item: str, regions: Sequence[tuple[int, int]]) -> bool:
    """Whether the first occurrence of ``item`` in ``output`` starts on a line (1-based, CRLF
    read as LF) that one of ``regions`` (first, last) holds."""
    text = output.replace("\r\n", "\n")
    at = text.find(item.replace("\r\n", "\n"))
    if at == -1 or not regions:
        return False
    line = text.count("\n", 0, at) + 1
    return any(first <= line <= last for first, last in regions)


def evaluate(
    cases: Iterable[Case],
    method: EvalMethod,
    budget: int,
    max_summary_chars: int = 800,
    read_max_chars: int = READ_MAX_CHARS,
) -> Report:
    """Score ``method`` at ``budget`` chars over every case (model-input: ``budget`` is one
    request's window, ``read_max_chars`` what a job reads in all)."""
    results = tuple(
        evaluate_case(c, method, budget, max_summary_chars, read_max_chars) for c in cases
    )
    return Report(method=method, budget=budget, results=results)
