"""``tersify eval --method model``: real model summaries scored on a corpus (its options and run).

Not a subcommand of its own: ``tersify eval`` adds these options and hands ``--method model``
here.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from tersify.settings import Settings
from tersify.settings.values import listed
from tersify.worker.cli.corpus import corpus_parts
from tersify.worker.quality.answers import AnswerStore
from tersify.worker.quality.corpus import Case, load_cases
from tersify.worker.quality.modeleval import CaseRun, ModelEval, Status, estimate_usd
from tersify.worker.quality.modelreport import report_json, tallies
from tersify.worker.summarize.cache import PROMPT_VERSION


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``--method model``."""
    g = p.add_argument_group("--method model")
    g.add_argument("--model", default=None, help="models to compare, A,B (default: configured)")
    g.add_argument(
        "--prompt-version",
        default=None,
        help=f"prompt versions to compare, A,B (default: the current, {PROMPT_VERSION}); other "
        "versions are read from the answers earlier runs kept",
    )
    g.add_argument(
        "--max-cost",
        type=float,
        default=None,
        help="USD ceiling of this run (default TERSIFY_EVAL_MAX_COST_USD)",
    )
    g.add_argument("--dry-run", action="store_true", help="estimate the cost; call no model")
    g.add_argument(
        "--answers",
        type=Path,
        default=None,
        help="where answers are kept (default TERSIFY_EVAL_CACHE_DIR)",
    )
    g.add_argument("--no-keep", action="store_true", help="neither read nor keep answers")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Score the model(s) over the corpus; 2 on bad input, 1 when some case got no answer."""
    from tersify.worker.model.pricing import summary_model
    from tersify.worker.model.providers.registry import PROVIDERS, remote, summary_provider
    from tersify.worker.runtime.logconfig import configure_logging

    configure_logging(settings)  # on stderr: stdout holds the report
    if PROVIDERS[summary_provider(settings)].local:
        keys = " or ".join(f"TERSIFY_{name.upper()}_API_KEY" for name in remote())
        return _refuse(f"no model provider: set {keys}")
    cases = _cases(args)
    if isinstance(cases, str):
        return _refuse(cases)
    models = _names(args.model) or [str(summary_model(settings))]
    versions = _names(args.prompt_version) or [PROMPT_VERSION]
    max_cost = settings.eval_max_cost_usd if args.max_cost is None else args.max_cost
    if max_cost < 0:
        return _refuse("--max-cost must not be negative")
    store = AnswerStore(None if args.no_keep else args.answers or settings.eval_cache_dir)
    if args.dry_run:
        evaluation = ModelEval(settings, store, max_cost=max_cost)
        pending = evaluation.pending(cases, models) if PROMPT_VERSION in versions else []
        usd = sum(estimate_usd(case, model, settings) for case, model in pending)
        print(
            f"estimate: {len(pending)} model call(s) for {len(cases)} case(s) x {len(models)} "
            f"model(s), ~${usd:.4f} at most (ceiling ${max_cost:g}); the rest are kept answers"
        )
        return 0
    runs, evaluation = _run(args, settings, store, max_cost, cases, models, versions)
    _print(runs, evaluation, as_json=args.json)
    return 1 if any(r.status is Status.FAILED for r in runs) else 0


def _run(
    args: argparse.Namespace,
    settings: Settings,
    store: AnswerStore,
    max_cost: float,
    cases: list[Case],
    models: list[str],
    versions: list[str],
) -> tuple[list[CaseRun], ModelEval]:
    from tersify.store.redis_url import redis_client
    from tersify.worker.model.providers.registry import make_provider, summary_provider
    from tersify.worker.model.routes import route

    client = redis_client(settings)
    name = summary_provider(settings)
    providers = {m: make_provider(settings, name, pool_size=1, model=m) for m in models}
    bar = Progress(
        TextColumn("eval"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=args.no_progress or not sys.stderr.isatty(),
    )
    task = bar.add_task("eval", total=len(cases) * len(models) * len(versions))
    evaluation = ModelEval(
        settings, store, max_cost=max_cost, on_done=lambda run: bar.advance(task)
    )
    try:
        routes = {m: route(settings, client, p) for m, p in providers.items() if p is not None}
        with bar:
            return evaluation.run(cases, routes, versions), evaluation
    finally:
        for provider in providers.values():
            if provider is not None:
                provider.close()
        client.close()


def _cases(args: argparse.Namespace) -> list[Case] | str:
    try:
        parts = corpus_parts(args.corpus_dir, args.split)
    except ValueError as exc:
        return str(exc)
    cases: list[Case] = []
    for part, folder in parts:
        try:
            loaded = load_cases(folder)
        except (ValueError, KeyError, OSError) as exc:
            return f"bad case in {folder}: {exc!r}"
        if not loaded:
            return f"no NAME.txt + NAME.json cases in {folder}"
        cases += [_named(c, part) for c in loaded]
    return cases


def _named(case: Case, part: str | None) -> Case:
    return replace(case, name=f"{part}/{case.name}") if part else case


def _names(value: str | None) -> list[str]:
    return [str(name) for name in listed(value or "")]


def _refuse(problem: str) -> int:
    print(f"tersify eval: {problem}", file=sys.stderr)
    return 2


def _print(runs: list[CaseRun], evaluation: ModelEval, *, as_json: bool) -> None:
    if as_json:
        report = report_json(runs, evaluation.spent_usd, evaluation.stopped_on_budget)
        print(json.dumps(report, ensure_ascii=False))
        return
    console = Console(width=max(Console().width, 120), highlight=False, soft_wrap=False)
    cases = Table(title="per case", title_justify="left")
    columns = ("case", "model", "prompt", "status", "kept", "chars out", "tokens in/out", "USD")
    for column in (*columns, "s", "missing or why"):
        cases.add_column(column, overflow="fold")
    for r in runs:
        a = r.answer
        why = (a.fallback_reason or "") if r.status is Status.FAILED and a else ""
        cases.add_row(
            r.case,
            r.model,
            r.prompt_version,
            r.status.value + (" (kept)" if r.cached else ""),
            f"{r.kept}/{r.total}" if r.status is Status.ANSWERED else "-",
            str(len(a.text)) if a and r.status is Status.ANSWERED else "-",
            f"{a.input_tokens}/{a.output_tokens}" if a else "-",
            f"{a.usd:.5f}" if a else "-",
            f"{a.seconds:.2f}" if a else "-",
            why or "; ".join(item[:40] for item in r.missing),
        )
    console.print(cases)
    totals = Table(title="per model and prompt version", title_justify="left")
    for column in ("model", "prompt", "answered", "failed", "not run", "kept", "%", "chars out"):
        totals.add_column(column)
    for column in ("tokens in/out", "USD", "s mean", "s max"):
        totals.add_column(column)
    for t in tallies(runs):
        j = t.as_json()
        totals.add_row(
            t.model,
            t.prompt_version,
            f"{t.answered}/{t.cases}",
            str(t.failed),
            str(t.not_run),
            f"{t.kept}/{t.total}",
            f"{t.percent:.1f}",
            str(t.chars_out),
            f"{t.input_tokens}/{t.output_tokens}",
            f"{t.usd:.4f}",
            str(j["seconds_mean"] if j["seconds_mean"] is not None else "-"),
            str(j["seconds_max"] if j["seconds_max"] is not None else "-"),
        )
    console.print(totals)
    stop = " · stopped at the cost ceiling" if evaluation.stopped_on_budget else ""
    console.print(f"spent this run: ${evaluation.spent_usd:.4f}{stop}")
