"""``tersify eval-reruns``: score change summaries over consecutive runs of the same command.

Each pair's later run is told as what changed since the earlier one, as a worker without a
model tells it, and summarized on its own; the facts about what changed are counted in each,
with the tokens each costs (``worker.quality.reruns``). A corpus split into ``tune/`` and
``check/`` is scored per split.
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


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``eval-reruns`` subcommand."""
    p = sub.add_parser("eval-reruns", help=summary("eval-reruns"))
    p.add_argument(
        "corpus_dir", type=Path, help="a corpus directory, or one split into tune/ check/"
    )
    p.add_argument("--split", choices=(*SPLITS, "both"), default=None)
    p.add_argument("--pairs", action="store_true", help="list every pair's scores too")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Replay every sequence of the corpus and print the scores."""
    from tersify.worker.quality.reruns import load_sequences, score_sequence, summarize_scores
    from tersify.worker.runtime.logconfig import configure_logging

    configure_logging(settings)  # on stderr: stdout holds the report
    try:  # ``both`` of a corpus that is not split: the whole of it
        parts = corpus_parts(args.corpus_dir, None if args.split == "both" else args.split)
    except ValueError as exc:
        return _refuse(str(exc))
    report: dict[str, Any] = {}
    for part, folder in parts:
        try:
            cases = load_sequences(folder)
        except (ValueError, KeyError, TypeError, OSError) as exc:
            return _refuse(f"bad case in {folder}: {exc!r}")
        if not cases:
            return _refuse(f"no NAME.json cases in {folder}")
        scored = [s for case in cases for s in score_sequence(case, settings)]
        report[part or "all"] = {
            "total": summarize_scores(scored),
            "pairs": [s.as_json() for s in scored],
        }
    if args.json:
        print(json.dumps(report if parts[0][0] is not None else report["all"], indent=1))
        return 0
    for name, part in report.items():
        _print(name, part, args.pairs)
    return 0


def _print(name: str, part: dict[str, Any], pairs: bool) -> None:
    total = part["total"]
    facts = total["facts"]
    print(f"== {name}: {total['pairs']} pairs, {total['told_as_change']} told as changes")
    for kind in ("new", "verdict", "gone"):
        f = facts[kind]
        told, alone, of = f["change"], f["alone"], f["total"]
        print(f"  {kind:<8} kept {told}/{of} as changes, {alone}/{of} on their own")
    print(
        f"  tokens   {total['tokens_change']} as changes, {total['tokens_alone']} on their own "
        f"({total['fewer_percent']}% fewer); pairs with ≤10% of lines changed: "
        f"{total['small_pairs']}, {total['small_fewer_percent']}% fewer; longest change "
        f"summary / its standalone: {total['longest_ratio']}"
    )
    print(
        f"  model input where told as changes: {total['model_chars_rerun']} chars, "
        f"{total['model_chars_alone']} on their own"
    )
    for missed in total["missed"]:
        print(f"  missed by a change summary: {missed}")
    for missed in total["missed_alone"]:
        print(f"  missed on its own (runs too different, or no shorter as changes): {missed}")
    if pairs:
        for p in part["pairs"]:
            kept = " ".join(f"{k}={v['change']}/{v['total']}" for k, v in p["facts"].items())
            print(
                f"  {p['name']} {p['runs'][0]}->{p['runs'][1]} share={p['share']:.2f} "
                f"change={p['told_as_change']} tokens={p['tokens_change']}/{p['tokens_alone']} "
                f"{kept}"
            )


def _refuse(message: str) -> int:
    print(f"tersify eval-reruns: {message}", file=sys.stderr)
    return 2
