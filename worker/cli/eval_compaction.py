"""``tersify eval-compaction``: score compaction over a corpus of real agent conversations.

Tune and check agents are reported apart (a corpus split into ``tune/`` and ``check/`` holds
each agent wholly on one side), by fact kind and by agent, each beside the baseline: the text of
the compacted part's last messages in the same room as the summary.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.cli.corpus import SPLITS, corpus_parts

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
        "--before",
        type=Path,
        default=None,
        help="a --json report of another compaction (another version), shown beside this one",
    )
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Compact every conversation of the corpus without a model and print the scores."""
    from tersify.worker.quality.compaction_eval import evaluate_conversations
    from tersify.worker.quality.conversations import conversation_paths, load_conversations
    from tersify.worker.runtime.logconfig import configure_logging

    configure_logging(settings)  # on stderr: stdout holds the report
    try:
        parts = corpus_parts(args.corpus_dir, args.split)
    except ValueError as exc:
        return _refuse(str(exc))
    if min(args.protect_first, args.protect_last) < 0:
        return _refuse("--protect-first and --protect-last must not be negative")
    before = _before(args.before)
    reports: dict[str, dict[str, Any]] = {}
    for part, folder in parts:
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
        _print(reports, before.get("splits", {}) if before else {})
    return 0


def _before(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    loaded = json.loads(path.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else None


def _refuse(problem: str) -> int:
    print(f"tersify eval-compaction: {problem}", file=sys.stderr)
    return 2


def _cell(score: dict[str, int] | None, short: bool = False) -> str:
    if not score or not score.get("total"):
        return "-"
    kept, total = score["kept"], score["total"]
    return f"{kept}/{total}" if short else f"{kept}/{total} ({100 * kept / total:.0f}%)"


def _pair(source: dict[str, Any], kind: str, short: bool = False) -> str:
    """A report's summary-only score and the baseline's, for one kind (or all)."""
    if kind == "all":
        ours, base = source["summary_only"], source.get("baseline")
    else:
        ours = source["summary_only_by_kind"].get(kind)
        base = source.get("baseline_by_kind", {}).get(kind)
    return f"{_cell(ours, short)} | {_cell(base, short)}"


def _print(reports: dict[str, dict[str, Any]], before: dict[str, dict[str, Any]]) -> None:
    """Tables of the facts only the summary can carry, kept by tersify | by the baseline: by
    kind for each split (beside an earlier report when given), then by agent; then a line a
    split on everything else."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 140), highlight=False, soft_wrap=False)
    table = Table(title="facts only the summary can carry: kept by tersify | by the baseline")
    table.add_column("kind")
    for name, report in reports.items():
        agents = ", ".join(report.get("agents", []))
        if name in before:
            table.add_column(f"{name} before", justify="right")
        table.add_column(f"{name} ({agents})" if agents else name, justify="right")
    for kind in [*KINDS, "all"]:
        cells = [kind]
        for name, report in reports.items():
            for source in ([before[name]] if name in before else []) + [report]:
                cells.append(_pair(source, kind))
        table.add_row(*cells)
    console.print(table)
    per_agent = Table(title="by agent: kept by tersify | by the baseline (kept/total)")
    for column in ("split", "agent", "cases", "all", *KINDS):
        per_agent.add_column(column, justify="left" if column in ("split", "agent") else "right")
    for name, report in reports.items():
        for agent, scores in report.get("by_agent", {}).items():
            cells = [name, agent, str(scores["cases"])]
            cells += [_pair(scores, kind, short=True) for kind in ("all", *KINDS)]
            per_agent.add_row(*cells)
    console.print(per_agent)
    for name, report in reports.items():
        cases = report["cases"]
        print(
            f"split={name} cases={cases} pairs_intact={report['pairs_intact']}/{cases} "
            f"verbatim={report['verbatim']}/{cases} summary_only={_cell(report['summary_only'])} "
            f"baseline={_cell(report.get('baseline'))} overall={_cell(report['overall'])} "
            f"max_summary_chars={report['max_summary_chars']} "
            f"reference_windows: agent's own {_cell(report['reference'])}, "
            f"tersify {_cell(report['reference_ours'])}"
        )
