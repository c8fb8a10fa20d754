"""``tersify eval-compaction``: score compaction over a corpus of real agent conversations."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tersify.settings import Settings
from tersify.worker.cli.commands import summary

SPLITS = ("tune", "check")
KINDS = ("task", "file", "error", "test", "decision", "remains")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``eval-compaction`` subcommand."""
    p = sub.add_parser(
        "eval-compaction",
        help=summary("eval-compaction"),
    )
    p.add_argument(
        "corpus_dir", type=Path, help="a corpus directory, or one split into tune/ check/"
    )
    p.add_argument("--split", choices=(*SPLITS, "both"), default=None)
    p.add_argument(
        "--method",
        choices=("extractive", "model-floor"),
        default="extractive",
        help="extractive: no model; model-floor: a stand-in model whose narrative states "
        "nothing, so only what tersify adds around any model's answer is scored",
    )
    p.add_argument("--protect-first", type=int, default=2)
    p.add_argument("--protect-last", type=int, default=6)
    p.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a --json report of another compaction, shown beside this one",
    )
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Compact every conversation of the corpus without a model and print the scores."""
    from tersify.worker.quality.compaction_eval import evaluate_conversations
    from tersify.worker.quality.conversations import conversation_paths, load_conversations

    directory: Path = args.corpus_dir
    if not directory.is_dir():
        return _refuse(f"{directory} is not a directory")
    split = all((directory / name).is_dir() for name in SPLITS)
    if args.split is not None and not split:
        return _refuse(f"{directory} has no tune/ and check/ to score")
    parts = [args.split] if args.split in SPLITS else list(SPLITS) if split else [None]
    if min(args.protect_first, args.protect_last) < 0:
        return _refuse("--protect-first and --protect-last must not be negative")
    baseline = _baseline(args.baseline)
    reports: dict[str, dict[str, Any]] = {}
    for part in parts:
        folder = directory / part if part else directory
        built, unbuilt = conversation_paths(folder)
        if unbuilt:
            print(f"tersify eval-compaction: {len(unbuilt)} cases in {folder} have no "
                  "messages built; see the corpus README", file=sys.stderr)  # fmt: skip
        if not built:
            return _refuse(f"no NAME.json + NAME.messages.json cases in {folder}")
        try:
            cases = load_conversations(folder)
        except (ValueError, KeyError, OSError) as exc:
            return _refuse(f"bad case in {folder}: {exc!r}")
        protect = (args.protect_first, args.protect_last)
        floor = args.method == "model-floor"
        report = evaluate_conversations(cases, settings, protect, floor=floor)
        reports[part or "all"] = report.as_json()
    if args.json:
        print(json.dumps({"splits": reports}, ensure_ascii=False))
    else:
        _print(reports, baseline.get("splits", {}) if baseline else {})
    return 0


def _baseline(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    loaded = json.loads(path.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else None


def _refuse(problem: str) -> int:
    print(f"tersify eval-compaction: {problem}", file=sys.stderr)
    return 2


def _cell(score: dict[str, int] | None) -> str:
    if not score or not score.get("total"):
        return "-"
    kept, total = score["kept"], score["total"]
    return f"{kept}/{total} ({100 * kept / total:.0f}%)"


def _print(reports: dict[str, dict[str, Any]], baseline: dict[str, dict[str, Any]]) -> None:
    """One table of facts kept by kind: each split, with its baseline beside it when given."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 120), highlight=False, soft_wrap=False)
    table = Table(title="facts kept (overall | by the summary alone)")
    table.add_column("kind")
    for name in reports:
        if name in baseline:
            table.add_column(f"{name} before", justify="right")
        table.add_column(name, justify="right")
    rows = [(k, "by_kind", "summary_only_by_kind") for k in KINDS]
    for kind, overall_key, only_key in [*rows, ("all", "overall", "summary_only")]:
        cells = [kind]
        for name, report in reports.items():
            for source in ([baseline[name]] if name in baseline else []) + [report]:
                overall = source[overall_key] if kind == "all" else source[overall_key].get(kind)
                only = source[only_key] if kind == "all" else source[only_key].get(kind)
                cells.append(f"{_cell(overall)} | {_cell(only)}")
        table.add_row(*cells)
    console.print(table)
    for name, report in reports.items():
        cases = report["cases"]
        print(
            f"split={name} cases={cases} pairs_intact={report['pairs_intact']}/{cases} "
            f"verbatim={report['verbatim']}/{cases} summary_only={_cell(report['summary_only'])} "
            f"max_summary_chars={report['max_summary_chars']} "
            f"reference_windows: agent's own {_cell(report['reference'])}, "
            f"tersify {_cell(report['reference_ours'])}"
        )
