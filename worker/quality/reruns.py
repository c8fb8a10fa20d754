"""The re-run corpus scored: consecutive runs of one command, told as what changed beside the
summary each run gets on its own.

A case is ``NAME.json`` with its runs' outputs beside it (``NAME.1.txt``, ``NAME.2.txt``, …):
the runs, in order, of one command in one session, and for pairs of them the facts about what
changed, written before any summary: ``new`` (failures and errors the later run has and the
earlier had not), ``verdict`` (verdicts and counts that changed), ``gone`` (failures that
went). A sequence is replayed as a worker without a model replays its session
(``summarize_in_session``); each run is also summarized on its own, and, as a model would be
asked, its standalone request is set beside the re-run request (the earlier summary and the
diff).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tersify.classify import classify
from tersify.contract import PendingSummary, ToolType
from tersify.settings import Settings
from tersify.worker.model.tokens import estimate_tokens
from tersify.worker.redact import Redactor
from tersify.worker.rerun.commands import run_key
from tersify.worker.rerun.diff import compare
from tersify.worker.rerun.history import SessionRuns
from tersify.worker.rerun.summary import model_request, summarize_in_session
from tersify.worker.summarize.fit import settings_request
from tersify.worker.summarize.summarizer import summarize

KINDS: Final = ("new", "verdict", "gone")
_SPACE: Final = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Lower case, every run of white space one space: how facts are matched."""
    return _SPACE.sub(" ", text).strip().lower()


@dataclass(frozen=True, slots=True)
class Pair:
    """Two runs of a sequence (numbers from 1) and the facts about what changed between them."""

    earlier: int
    later: int
    facts: dict[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Sequence:
    """One command's runs in one session, and the pairs to score."""

    name: str
    tool_name: str
    runs: tuple[tuple[str, str], ...]  # (command, output)
    pairs: tuple[Pair, ...]
    family: str


def load_sequence(meta_path: Path) -> Sequence:
    """The case ``NAME.json`` with its runs' outputs."""
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    runs = tuple(
        (str(run["command"]), (meta_path.parent / run["output"]).read_text(encoding="utf-8"))
        for run in meta["runs"]
    )
    pairs = []
    for pair in meta["pairs"]:
        earlier, later = pair["runs"]
        if not 1 <= earlier < later <= len(runs):
            raise ValueError(f"{meta_path}: pair {pair['runs']} is not two of its runs in order")
        facts = {kind: tuple(str(f) for f in pair.get(kind, ())) for kind in KINDS}
        pairs.append(Pair(earlier, later, facts))
    family = str(meta.get("family") or meta["source"].get("repository", meta_path.stem))
    return Sequence(meta_path.stem, str(meta["tool_name"]), runs, tuple(pairs), family)


def load_sequences(folder: Path) -> list[Sequence]:
    """Every case of ``folder``, by name."""
    return [load_sequence(p) for p in sorted(folder.glob("*.json"))]


@dataclass(frozen=True, slots=True)
class Scored:
    """One pair: the later run told as what changed (or on its own) and on its own."""

    name: str
    earlier: int
    later: int
    share: float  # of both runs' lines without a match in the other
    told_as_change: bool
    facts: dict[str, tuple[int, int, int]]  # kind → (total, kept as change, kept on its own)
    missed: tuple[str, ...]  # new and verdict facts the change summary left out
    tokens_change: int
    tokens_alone: int
    model_chars_rerun: int | None  # the re-run request (None: not told as a change)
    model_chars_alone: int

    def as_json(self) -> dict[str, Any]:
        """The pair's scores, JSON-ready."""
        return {
            "name": self.name,
            "runs": [self.earlier, self.later],
            "share": round(self.share, 4),
            "told_as_change": self.told_as_change,
            "facts": {
                k: dict(zip(("total", "change", "alone"), v, strict=True))
                for k, v in self.facts.items()
            },
            "missed": list(self.missed),
            "tokens_change": self.tokens_change,
            "tokens_alone": self.tokens_alone,
            "model_chars_rerun": self.model_chars_rerun,
            "model_chars_alone": self.model_chars_alone,
        }


def score_sequence(case: Sequence, settings: Settings) -> list[Scored]:
    """Replay one sequence and score its pairs."""
    runs = SessionRuns(settings.rerun_window)
    by_later = {pair.later: pair for pair in case.pairs}
    scored = []
    for number, (command, output) in enumerate(case.runs, 1):
        job = PendingSummary.build(
            deadline_seconds=settings.job_deadline_seconds,
            session_id="rerun-eval",
            tool_name=case.tool_name,
            command=command,
            output=output,
            output_ref=f"{number:032x}",
        )
        tool_type = classify(job.tool_name, job.command, job.output)
        key = run_key(job.tool_name, job.command)
        _, earlier = runs.find(key) if key is not None else (None, None)
        told = summarize_in_session(job, tool_type, runs, settings)
        pair = by_later.get(number)
        if pair is None:
            continue
        alone = summarize(job, tool_type, (), settings).text
        previous = case.runs[pair.earlier - 1][1]
        rerun_chars = None
        if told.rerun_of is not None and earlier is not None:
            _, prompt, _ = model_request(job, tool_type, earlier, settings, Redactor())
            rerun_chars = len(prompt.request.system) + len(prompt.request.user)
        scored.append(
            _scored(
                case.name,
                pair,
                told.text,
                told.rerun_of is not None,
                alone,
                previous,
                output,
                tool_type,
                job,
                settings,
                rerun_chars,
            )
        )
    return scored


def _scored(
    name: str,
    pair: Pair,
    told: str,
    as_change: bool,
    alone: str,
    previous: str,
    output: str,
    tool_type: ToolType,
    job: PendingSummary,
    settings: Settings,
    rerun_chars: int | None,
) -> Scored:
    seen_told, seen_alone = normalize(told), normalize(alone)
    facts: dict[str, tuple[int, int, int]] = {}
    missed: list[str] = []
    for kind, items in pair.facts.items():
        kept = [normalize(f) in seen_told for f in items]
        facts[kind] = (len(items), sum(kept), sum(normalize(f) in seen_alone for f in items))
        if kind != "gone":
            missed += [f for f, k in zip(items, kept, strict=True) if not k]
    request = settings_request(job, tool_type, settings).request
    return Scored(
        name=name,
        earlier=pair.earlier,
        later=pair.later,
        share=compare(previous, output, tool_type).share,
        told_as_change=as_change,
        facts=facts,
        missed=tuple(missed),
        tokens_change=estimate_tokens(told),
        tokens_alone=estimate_tokens(alone),
        model_chars_rerun=rerun_chars,
        model_chars_alone=len(request.system) + len(request.user),
    )


def summarize_scores(scored: list[Scored], small_share: float = 0.1) -> dict[str, Any]:
    """Totals over pairs: facts kept each way (and the new and verdict facts missed, by change
    summaries and by the summaries of runs that differ too much), tokens each way, the pairs
    where at most ``small_share`` of the lines changed apart, the longest change summary
    against its standalone one, and the model's input each way."""

    def fewer(rows: list[Scored]) -> float | None:
        alone = sum(r.tokens_alone for r in rows)
        return (
            None if not alone else round(100 * (1 - sum(r.tokens_change for r in rows) / alone), 1)
        )

    small = [r for r in scored if r.share <= small_share]
    told = [r for r in scored if r.told_as_change]
    facts = {
        kind: {
            "total": sum(r.facts[kind][0] for r in scored),
            "change": sum(r.facts[kind][1] for r in scored),
            "alone": sum(r.facts[kind][2] for r in scored),
        }
        for kind in KINDS
    }
    rerun_chars = [r for r in told if r.model_chars_rerun is not None]
    return {
        "pairs": len(scored),
        "told_as_change": len(told),
        "facts": facts,
        "missed": [f"{r.name} {r.earlier}->{r.later}: {m}" for r in told for m in r.missed],
        "missed_alone": [
            f"{r.name} {r.earlier}->{r.later}: {m}"
            for r in scored
            if not r.told_as_change
            for m in r.missed
        ],
        "tokens_change": sum(r.tokens_change for r in scored),
        "tokens_alone": sum(r.tokens_alone for r in scored),
        "fewer_percent": fewer(scored),
        "small_pairs": len(small),
        "small_fewer_percent": fewer(small),
        "longest_ratio": round(
            max((r.tokens_change / max(1, r.tokens_alone) for r in told), default=0.0), 3
        ),
        "model_chars_rerun": sum(r.model_chars_rerun or 0 for r in rerun_chars),
        "model_chars_alone": sum(r.model_chars_alone for r in rerun_chars),
    }
