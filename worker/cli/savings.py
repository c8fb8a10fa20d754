"""``tersify savings``: what tersify would have saved on agent sessions already run."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.runtime.logconfig import configure_logging
from tersify.worker.savings.compute import local_rows, outputs_of, remote_rows
from tersify.worker.savings.prices import Prices
from tersify.worker.savings.reader import LogFormat, read_logs
from tersify.worker.savings.remote import Remote, RemoteRun, estimate_usd, model_requests
from tersify.worker.savings.render import render
from tersify.worker.savings.report import Report
from tersify.worker.savings.shrink import summarizes
from tersify.worker.savings.transcript import ToolOutput

HINT_TOKENS = 60
"""Tokens of the read-back hint a summary carries (the MCP proxy's note naming its
``output_ref`` is about 230 characters)."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``savings`` subcommand."""
    p = sub.add_parser("savings", help=summary("savings"))
    p.add_argument("paths", nargs="+", type=Path, help="session logs, or directories of them")
    p.add_argument(
        "--format",
        type=LogFormat,
        choices=list(LogFormat),
        default=LogFormat.AUTO,
        help="claude-code (project JSONL), codex (rollout JSONL), messages (JSON or JSONL "
        "message lists); default: told from each file",
    )
    p.add_argument(
        "--model",
        nargs="?",
        const="",
        default=None,
        metavar="NAME",
        help="summarize through the queue with the configured provider (or model NAME) "
        "instead of the local shrinks; needs a worker",
    )
    p.add_argument("--max-cost", type=float, default=None, help="--model: stop sending past USD")
    p.add_argument("--dry-run", action="store_true", help="--model: estimate the cost, send none")
    p.add_argument("--parallel", type=int, default=16, help="--model: most jobs in flight")
    p.add_argument("--timeout", type=float, default=600.0, help="--model: seconds one job may take")
    p.add_argument(
        "--price",
        type=float,
        default=None,
        help="USD per million input tokens for models without a price (TERSIFY_AGENT_MODEL_PRICES)",
    )
    p.add_argument("--prices", default="", help="model=in/out,... over the configured prices")
    p.add_argument(
        "--hint-tokens",
        type=int,
        default=HINT_TOKENS,
        help=f"tokens each summary's read-back hint adds (default {HINT_TOKENS}; 0: none)",
    )
    p.add_argument("--top", type=int, default=10, help="largest outputs to list (default 10)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--csv", type=Path, default=None, help="write one row per tool output here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Read the logs, shrink or summarize each output, report; 2 on bad input."""
    configure_logging(settings)  # on stderr: stdout holds the report
    try:
        prices = Prices.of(settings.agent_model_prices, args.prices, args.price)
        reading = read_logs(args.paths, args.format)
    except (ValueError, OSError) as exc:
        print(f"tersify savings: {exc}", file=sys.stderr)
        return 2
    if args.hint_tokens < 0 or args.top < 0:
        print("tersify savings: --hint-tokens and --top must not be negative", file=sys.stderr)
        return 2
    outputs = outputs_of(reading)
    model = args.model or None
    if args.model is not None and args.dry_run:
        return _estimate(settings, outputs, model)
    bar = _progress(enabled=not args.no_progress and sys.stderr.isatty())
    report = Report(
        rows=[],
        files=reading.files,
        sessions=len(reading.transcripts),
        repeated=reading.repeated,
        skips=reading.skips,
        threshold=settings.summarize_threshold_chars,
        hint_tokens=args.hint_tokens,
    )
    with bar:
        if args.model is None:
            task = bar.add_task("shrink", total=len(outputs))
            report.mode = f"local shrinks (no model, {settings.local_budget_chars} chars)"
            report.rows = local_rows(
                settings, outputs, prices, args.hint_tokens, lambda: bar.advance(task)
            )
        else:
            _send(args, settings, outputs, prices, report, bar)
    _notes(report, outputs, prices)
    _print(args, report)
    return 0


def _send(
    args: argparse.Namespace,
    settings: Settings,
    outputs: list[ToolOutput],
    prices: Prices,
    report: Report,
    bar: Progress,
) -> None:
    from tersify.client import Producer

    todo = [(i, o) for i, o in enumerate(outputs) if summarizes(settings, o)]
    task = bar.add_task("summarize", total=len(todo))

    def advance(done: RemoteRun) -> None:
        bar.update(task, completed=len(done.shrunk) + done.failed)

    with Producer(settings) as producer:
        remote = Remote(
            producer,
            parallel=args.parallel,
            timeout=args.timeout,
            max_cost=args.max_cost,
            model=args.model or None,
            on_done=advance,
        )
        done = remote.send(todo)
    report.mode = f"model summaries through the batch queue ({args.model or 'configured model'})"
    report.rows = remote_rows(settings, outputs, done, prices, args.hint_tokens)
    report.not_sent = done.not_sent + done.failed
    report.stopped_on_budget = done.stopped_on_budget
    if done.failed:
        report.notes.append(f"{done.failed} output(s) got no summary (timeout or refused)")


def _estimate(settings: Settings, outputs: list[ToolOutput], model: str | None) -> int:
    todo = [o for o in outputs if summarizes(settings, o)]
    usd = sum(estimate_usd(settings, o, model) for o in todo)
    requests = sum(model_requests(settings, o) for o in todo)
    print(
        f"estimate: {len(todo)} of {len(outputs)} output(s) over "
        f"{settings.summarize_threshold_chars} chars would be sent in {requests} model "
        f"request(s), ~${usd:.4f} at most"
    )
    return 0


def _notes(report: Report, outputs: list[ToolOutput], prices: Prices) -> None:
    unpriced = sorted(
        {o.model or "(unknown)" for o in outputs if prices.input_price(o.model) is None}
    )
    if unpriced:
        report.notes.append(
            "* no price for: " + ", ".join(unpriced) + " (their tokens count, their dollars do "
            "not; --price or --prices to set one)"
        )


def _print(args: argparse.Namespace, report: Report) -> None:
    if args.csv is not None:
        with args.csv.open("w", encoding="utf-8", newline="") as handle:
            report.write_csv(handle)
    if args.json:
        print(json.dumps(report.as_json(args.top), ensure_ascii=False))
        return
    console = Console(width=max(Console().width, 160), highlight=False, soft_wrap=False)
    console.print(render(report, args.top))


def _progress(*, enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not enabled,
    )
