"""``tersify eval``: score a shrink method over a corpus directory and print the verdict."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tersify.contract import ToolType
from tersify.settings import Settings
from tersify.worker.cli import eval_model
from tersify.worker.cli.commands import summary
from tersify.worker.cli.corpus import SPLITS, corpus_parts
from tersify.worker.quality.corpus import load_cases
from tersify.worker.quality.evaluation import EvalMethod, Report, Tally, evaluate

_TYPE_COLUMNS = (
    *("type", "cases", "kept", "%", "middle", "classified"),
    *("chars in", "out", "ratio", "ms"),
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``eval`` subcommand."""
    p = sub.add_parser("eval", help=summary("eval"))
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
        "or one request's window, TERSIFY_MODEL_WINDOW_CHARS (50000), for model-input (a job "
        "reads TERSIFY_MODEL_READ_MAX_CHARS in all)",
    )
    p.add_argument(
        "--split",
        choices=(*SPLITS, "both"),
        default=None,
        help="a corpus split into tune/ and check/: score one of them, or both side by side "
        "(the default for such a corpus)",
    )
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    eval_model.add_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Load the corpus, score the method and print the report; 2 when there is nothing to score."""
    if args.method is EvalMethod.MODEL:
        return eval_model.run(args, settings)
    try:
        parts = corpus_parts(args.corpus_dir, args.split)
    except ValueError as exc:
        return _refuse(str(exc))
    method: EvalMethod = args.method
    budget: int = args.budget
    if budget is None:
        local = method is not EvalMethod.MODEL_INPUT
        budget = settings.local_budget_chars if local else settings.model_window_chars
    if budget <= 0:
        return _refuse("--budget must be positive")
    reports: dict[str | None, Report] = {}
    for part, folder in parts:
        try:
            cases = load_cases(folder)
        except (ValueError, KeyError, OSError) as exc:
            return _refuse(f"bad case in {folder}: {exc!r}")
        if not cases:
            return _refuse(f"no NAME.txt + NAME.json cases in {folder}")
        reports[part] = evaluate(
            cases, method, budget, settings.max_summary_chars, settings.model_read_max_chars
        )
    _print(reports, as_json=args.json)
    return 0


def _refuse(problem: str) -> int:
    print(f"tersify eval: {problem}", file=sys.stderr)
    return 2


def _print(reports: dict[str | None, Report], *, as_json: bool) -> None:
    """One report as before; the splits of a split corpus side by side, one line each."""
    if None in reports:
        report = reports[None]
        if as_json:
            print(json.dumps(report.as_json(), ensure_ascii=False))
            return
        _print_tables(report)
        print(report.summary_line())
        return
    if as_json:
        splits = {name: report.as_json() for name, report in reports.items()}
        print(json.dumps({"splits": splits}, ensure_ascii=False))
        return
    if len(reports) == 1:
        _print_tables(next(iter(reports.values())))
    else:
        _print_side_by_side(reports)
    for name, report in reports.items():
        print(f"{report.summary_line()} split={name}")


def _print_side_by_side(reports: dict[str | None, Report]) -> None:
    console = Console(width=max(Console().width, 110), highlight=False, soft_wrap=False)
    table = Table(title="kept per expected type, split by split (the gap is the over-fitting)")
    table.add_column("type")
    for name in reports:
        table.add_column(f"{name}", justify="right")
        table.add_column(f"{name} middle", justify="right")
        table.add_column(f"{name} classified", justify="right")
    by_type = {name: report.by_type() for name, report in reports.items()}
    for label in [*(t.value for t in ToolType), "all"]:
        cells: list[str] = [label]
        for name, report in reports.items():
            tally = report.overall if label == "all" else by_type[name].get(ToolType(label))
            if tally is None:
                cells += ["-", "-", "-"]
                continue
            cells += [
                f"{tally.kept}/{tally.total} ({tally.percent:.1f}%)",
                _middle(tally),
                _classified(tally),
            ]
        table.add_row(*cells)
    console.print(table)


def _classified(tally: Tally) -> str:
    return f"{tally.classification_correct}/{tally.cases}"


def _middle(tally: Tally) -> str:
    return f"{tally.middle_kept}/{tally.middle_total} ({tally.middle_percent:.1f}%)"


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
    for column in _TYPE_COLUMNS:
        types.add_column(column, justify="right" if column != "type" else "left")
    rows = [*((t.value, tally) for t, tally in report.by_type().items()), ("all", report.overall)]
    for label, t in rows:
        types.add_row(
            label,
            str(t.cases),
            f"{t.kept}/{t.total}",
            f"{t.percent:.1f}",
            _middle(t),
            f"{t.classification_correct}/{t.cases}",
            str(t.chars_in),
            str(t.chars_out),
            f"{t.ratio:.3f}",
            f"{t.ms_per_case:.1f}",
        )
    console.print(types)
