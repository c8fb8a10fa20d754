"""``tersify reprocess``: re-summarize archived session logs on the batch queue."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from tersify.contract import Method, ToolType
from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.reprocess.checkpoint import Checkpoint, checkpoint_path, read_output
from tersify.worker.reprocess.estimate import estimate_all
from tersify.worker.reprocess.filters import Filters
from tersify.worker.reprocess.progress import progress_bar
from tersify.worker.reprocess.reader import ArchivedJob, read_logs
from tersify.worker.reprocess.report import Report, render_estimate
from tersify.worker.reprocess.runner import Runner, RunStats


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``reprocess`` subcommand."""
    p = sub.add_parser("reprocess", help=summary("reprocess"))
    p.add_argument("paths", nargs="+", type=Path, help="session-log directories or JSONL files")
    p.add_argument("--output", type=Path, default=Path("reprocess.jsonl"), help="new results")
    p.add_argument("--dry-run", action="store_true", help="estimate tokens and cost; submit none")
    p.add_argument("--max-cost", type=float, default=None, help="stop submitting past this USD")
    p.add_argument("--parallel", type=int, default=16, help="most jobs in flight (default 16)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds one job may take")
    p.add_argument("--session", action="append", default=[], help="only these sessions")
    p.add_argument("--since", type=_when, default=None, help="created at or after (ISO 8601)")
    p.add_argument("--until", type=_when, default=None, help="created before (ISO 8601)")
    p.add_argument("--tool-type", action="append", default=[], choices=[t.value for t in ToolType])
    p.add_argument("--method", action="append", default=[], choices=[m.value for m in Method])
    p.add_argument("--min-chars", type=int, default=None, help="only outputs this long or longer")
    p.add_argument("--max-chars", type=int, default=None, help="only outputs this long or shorter")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def _when(text: str) -> datetime:
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Read, filter, skip what is done, then estimate (``--dry-run``) or run and report."""
    read = read_logs(args.paths)
    filters = Filters(
        sessions=frozenset(args.session),
        since=args.since,
        until=args.until,
        tool_types=frozenset(ToolType(t) for t in args.tool_type),
        methods=frozenset(Method(m) for m in args.method),
        min_chars=args.min_chars,
        max_chars=args.max_chars,
    )
    matched = [item for item in read.jobs if filters.matches(item)]
    # a dry run only reads: it must not create or repair the output and checkpoint files
    checkpoint = None if args.dry_run else Checkpoint(args.output)
    done = checkpoint.done if checkpoint is not None else _done_ids(args.output)
    todo = [item for item in matched if item.job.job_id not in done]
    stats = {
        "files": read.files,
        "lines": read.lines,
        "skips": read.skips,
        "matched": len(matched),
        "already_done": len(matched) - len(todo),
    }
    if checkpoint is None:
        print("\n".join(Report.compare([], **stats).render_reading()))
        print(render_estimate(estimate_all(settings, todo)))
        return 0
    run_stats, code = _run(args, settings, checkpoint, todo)
    report = Report.compare(
        read_output(args.output),
        outcomes=run_stats.outcomes,
        stopped_on_budget=run_stats.stopped_on_budget,
        not_submitted=run_stats.not_submitted,
        **stats,
    )
    print(report.render(settings))
    return code


def _done_ids(output: Path) -> set[str]:
    ids = {line["old_job_id"] for line in read_output(output)}
    path = checkpoint_path(output)
    if path.exists():
        ids |= {line["old_job_id"] for line in read_output(path)}
    return ids


def _run(
    args: argparse.Namespace, settings: Settings, checkpoint: Checkpoint, todo: list[ArchivedJob]
) -> tuple[RunStats, int]:
    from tersify.client import Producer

    bar = progress_bar(enabled=not args.no_progress and sys.stderr.isatty())
    task = bar.add_task("reprocess", total=len(todo), outcomes="")

    def advance(stats: RunStats) -> None:
        mix = " ".join(f"{k}={v}" for k, v in sorted(stats.outcomes.items()))
        bar.update(task, completed=sum(stats.outcomes.values()), outcomes=mix)

    code = 0
    with Producer(settings) as producer, bar:
        runner = Runner(
            producer,
            checkpoint,
            parallel=args.parallel,
            timeout=args.timeout,
            max_cost=args.max_cost,
            on_done=advance,
        )
        try:
            runner.run(todo)
        except KeyboardInterrupt:
            code = 130  # what is recorded stays; the rerun redoes the jobs that were in flight
        finally:
            checkpoint.close()
    failed = runner.stats.outcomes["timeout"] + runner.stats.outcomes["error"]
    return runner.stats, code or (1 if failed else 0)
