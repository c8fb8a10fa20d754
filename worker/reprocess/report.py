"""The report comparing old and new results: method mix, compression, fallbacks, tokens, cost."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tersify.settings import Settings
from tersify.worker.reprocess.estimate import Estimate, cost
from tersify.worker.store.logfiles import Skip, skipped_lines


@dataclass
class Side:
    """Totals of one side (old or new) of the comparison."""

    jobs: int = 0
    methods: Counter[str] = field(default_factory=Counter)
    fallback_reasons: Counter[str] = field(default_factory=Counter)
    chars_in: int = 0
    chars_out: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, result: dict[str, Any]) -> None:
        """Count one result (a ``SummaryResult`` as JSON)."""
        self.jobs += 1
        self.methods[str(result.get("method"))] += 1
        if result.get("fallback_reason"):
            self.fallback_reasons[str(result["fallback_reason"])] += 1
        self.chars_in += int(result.get("chars_in") or 0)
        self.chars_out += int(result.get("chars_out") or 0)
        self.input_tokens += int(result.get("input_tokens") or 0)
        self.output_tokens += int(result.get("output_tokens") or 0)

    @property
    def ratio(self) -> float | None:
        """Output chars per input char (lower is tighter), None with no input."""
        return self.chars_out / self.chars_in if self.chars_in else None


@dataclass
class Report:
    """A run's reading stats, outcomes and the old/new comparison over the whole output file."""

    files: int
    lines: int
    skips: list[Skip]
    matched: int
    already_done: int
    old: Side
    new: Side
    outcomes: Counter[str] = field(default_factory=Counter)
    stopped_on_budget: bool = False
    not_submitted: int = 0

    @classmethod
    def compare(cls, output_lines: Iterable[dict[str, Any]], **stats: Any) -> Report:
        """Build the comparison from the output's lines; old results missing from logs skip."""
        old, new = Side(), Side()
        for line in output_lines:
            new.add(line["new"])
            if line.get("old"):
                old.add(line["old"])
        return cls(old=old, new=new, **stats)

    def render_reading(self) -> list[str]:
        """What was read: files, lines, the counted skips, matched and already-done jobs."""
        out = [
            f"read: {self.files} file(s), {self.lines} line(s), "
            f"{len(self.skips)} corrupt line(s) skipped",
        ]
        out += skipped_lines(self.skips)
        out.append(f"jobs: {self.matched} matched the filters, {self.already_done} already done")
        return out

    def render(self, settings: Settings) -> str:
        """The whole report as plain text."""
        out = self.render_reading()
        if self.outcomes:
            out.append("this run: " + _mix(self.outcomes))
        if self.stopped_on_budget:
            out.append(f"stopped: --max-cost reached, {self.not_submitted} job(s) not submitted")
        out.append(f"{'':18}{'old':>28}  {'new':>28}")
        names = (
            "jobs",
            "methods",
            "compression",
            "fallback reasons",
            "tokens in/out",
            "cost (USD)",
        )
        rows = zip(names, _column(self.old, settings), _column(self.new, settings), strict=True)
        out += [f"{name:18}{old:>28}  {new:>28}" for name, old, new in rows]
        return "\n".join(out)


def render_estimate(estimate: Estimate) -> str:
    """A dry run's estimate as one line."""
    return (
        f"estimate: {estimate.jobs} job(s) in {estimate.requests} model request(s), "
        f"~{estimate.input_tokens} input and "
        f"~{estimate.output_tokens} output tokens, ~${estimate.usd:.4f} at most"
    )


def _column(side: Side, settings: Settings) -> list[str]:
    return [
        str(side.jobs),
        _mix(side.methods),
        f"{side.ratio:.3f}" if side.ratio is not None else "-",
        _mix(side.fallback_reasons),
        f"{side.input_tokens}/{side.output_tokens}",
        f"{cost(settings, side.input_tokens, side.output_tokens):.4f}",
    ]


def _mix(counts: Counter[str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "-"
