"""``tersify demo``: the bundled example outputs summarized end to end.

Starts a private redis-server (unless ``TERSIFY_REDIS_URL`` is set) and a worker process whose
session log is a temporary directory (unless ``TERSIFY_SESSION_LOG_DIR`` is set), submits one
real tool output per tool type, prints what came back, and stops what it started.
With no API key configured the worker uses the built-in extractive provider.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from tersify.client import Producer, SummaryHandle
from tersify.contract import SummaryResult
from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.model.providers import summary_provider
from tersify.worker.processes.redis_server import LocalRedis
from tersify.worker.processes.worker_process import WorkerProcess

DEMO_WORKER = "demo@localhost"


@dataclass(frozen=True)
class Example:
    """One bundled tool output."""

    file: str
    tool_name: str
    command: str | None
    query: str | None
    output: str


def load_examples() -> list[Example]:
    """The bundled examples, one per tool type."""
    folder = resources.files("tersify.worker") / "examples"
    index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    return [
        Example(output=(folder / item["file"]).read_text(encoding="utf-8"), **item)
        for item in index
    ]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` subcommand."""
    p = sub.add_parser("demo", help=summary("demo"))
    p.add_argument("--timeout", type=float, default=120.0)
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace, settings: Settings) -> int:
    return run_demo(settings, timeout=args.timeout)


def run_demo(settings: Settings, *, timeout: float = 120.0) -> int:
    """Run the demo; return the process exit code."""
    console = Console(stderr=False)
    with ExitStack() as stack:
        if "redis_url" not in settings.model_fields_set:
            server = LocalRedis()
            server.start()
            stack.callback(server.cleanup)
            settings = settings.model_copy(update={"redis_url": server.url})
            console.print(f"[dim]private redis-server on {server.url}[/dim]")
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tersify-demo-")))
        if "session_log_dir" not in settings.model_fields_set:  # like Redis: private unless set
            settings = settings.model_copy(update={"session_log_dir": workdir / "sessions"})
        provider = summary_provider(settings)
        console.print(
            f"[dim]summary provider: {provider}; session log: {settings.session_log_dir}[/]"
        )
        worker = WorkerProcess(
            settings,
            workdir,
            hostname=DEMO_WORKER,
            log_level="WARNING",
            session_log_dir=str(settings.session_log_dir),
        )
        # Started before the clock: the timings below measure jobs, not start-up.
        stack.enter_context(worker.start(timeout=timeout))
        producer = stack.enter_context(Producer(settings))
        examples = load_examples()
        started = time.monotonic()
        handles = [
            producer.submit(
                session_id="demo",
                tool_name=ex.tool_name,
                output=ex.output,
                command=ex.command,
                query=ex.query,
            )
            for ex in examples
        ]
        try:
            results = [_wait(handle, worker, started + timeout) for handle in handles]
        except (RuntimeError, TimeoutError):
            console.print(f"[red]the worker did not answer; its log:[/]\n{worker.log_tail()}")
            raise
        _report(console, examples, results, started)
    return 0


def _wait(handle: SummaryHandle, worker: WorkerProcess, deadline: float) -> SummaryResult:
    while True:
        if not worker.alive():
            raise RuntimeError(f"the worker exited with code {worker.returncode}")
        remaining = deadline - time.monotonic()
        try:
            return handle.wait(min(2.0, max(0.1, remaining)))
        except TimeoutError:
            if remaining <= 0:
                raise


def _report(
    console: Console, examples: list[Example], results: list[SummaryResult], started: float
) -> None:
    table = Table(title="tersify demo (time: submitted → result stored)")
    for column in ("tool", "tool type", "method", "chars in → out", "time"):
        table.add_column(column)
    for ex, result in zip(examples, results, strict=True):
        seconds = (result.finished_at - result.queued_at).total_seconds()
        table.add_row(
            ex.tool_name,
            result.tool_type.value,
            result.method.value,
            f"{result.chars_in:,} → {result.chars_out:,}",
            f"{seconds:.3f}s",
        )
    console.print(table)
    for ex, result in zip(examples, results, strict=True):
        title = f"{result.tool_type.value} · {ex.command or ex.tool_name}"
        console.print(Panel(result.text, title=title, title_align="left", expand=False))
    total_in = sum(r.chars_in for r in results)
    total_out = sum(r.chars_out for r in results)
    console.print(
        f"{len(results)} outputs, {total_in:,} → {total_out:,} chars "
        f"in {time.monotonic() - started:.2f}s"
    )
