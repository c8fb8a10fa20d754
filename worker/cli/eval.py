"""``tersify eval``: score a shrink method over a corpus directory and print the verdict."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from producer.settings import Settings
from worker.quality.corpus import load_cases
from worker.quality.evaluation import EvalMethod, Report, evaluate


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``eval`` subcommand."""
    p = sub.add_parser(
        "eval", help="score a shrink method over a corpus (NAME.txt + NAME.json per case)"
    )
    p.add_argument("corpus_dir", type=Path, help="directory of NAME.txt + NAME.json cases")
    p.add_argument(
        "--method",
        type=EvalMethod,
        choices=list(EvalMethod),
        default=EvalMethod.EXTRACTIVE,
        help="shrink to score (default: extractive)",
    )
    p.add_argument(
        "--budget",
        type=int,
        default=None,
        help="chars; default TERSIFY_LOCAL_BUDGET_CHARS (2000), "
        "or TERSIFY_MAX_MODEL_INPUT_CHARS (50000) for model-input",
    )
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Load the corpus, score the method and print the report; 2 when there is nothing to score."""
    directory: Path = args.corpus_dir
    if not directory.is_dir():
        print(f"tersify eval: {directory} is not a directory", file=sys.stderr)
        return 2
    try:
        cases = load_cases(directory)
    except (ValueError, KeyError, OSError) as exc:
        print(f"tersify eval: bad case in {directory}: {exc!r}", file=sys.stderr)
        return 2
    if not cases:
        print(f"tersify eval: no NAME.txt + NAME.json cases in {directory}", file=sys.stderr)
        return 2
    method: EvalMethod = args.method
    budget: int = args.budget
    if budget is None:
        local = method is not EvalMethod.MODEL_INPUT
        budget = settings.local_budget_chars if local else settings.max_model_input_chars
    if budget <= 0:
        print("tersify eval: --budget must be positive", file=sys.stderr)
        return 2
    report = evaluate(cases, method, budget, settings.max_summary_chars)
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        _print_tables(report)
        print(report.summary_line())
    return 0


def _print_tables(report: Report) -> None:
    console = Console(width=max(Console().width, 110), highlight=False, soft_wrap=False)
    cases = Table(title=f"{report.method.value} at {report.budget} chars, per case")
    for column in ("case", "type", "kept", "chars in", "chars out", "ms", "missing"):
        cases.add_column(column, overflow="fold")
    for r in report.results:
        shown = r.tool_type.value if r.tool_type is r.expected_type else f"{r.tool_type.value}!"
        cases.add_row(
            r.name,
            shown,
            f"{r.kept}/{r.total}",
            str(r.chars_in),
            str(r.chars_out),
            f"{1000 * r.seconds:.1f}",
            "; ".join(item[:40] for item in r.missing),
        )
    console.print(cases)
    types = Table(title="per expected type (! after a type: classified otherwise)")
    for column in ("type", "cases", "kept", "%", "classified", "chars in", "out", "ratio", "ms"):
        types.add_column(column, justify="right" if column != "type" else "left")
    rows = [*((t.value, tally) for t, tally in report.by_type().items()), ("all", report.overall)]
    for label, t in rows:
        types.add_row(
            label,
            str(t.cases),
            f"{t.kept}/{t.total}",
            f"{t.percent:.1f}",
            f"{t.classification_correct}/{t.cases}",
            str(t.chars_in),
            str(t.chars_out),
            f"{t.ratio:.3f}",
            f"{t.ms_per_case:.1f}",
        )
    console.print(types)
