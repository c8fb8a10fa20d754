"""``tersify submit`` and ``tersify result``: one tool output through the queue, as a user would."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tersify.contract import Queue, SummaryResult
from tersify.errors import OutputTooLargeError
from tersify.settings import Settings

if TYPE_CHECKING:
    from tersify.client import Producer


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``submit`` and ``result`` subcommands."""
    p = sub.add_parser("submit", help="submit a tool output and print its summary")
    p.add_argument("file", nargs="?", default="-", help="the output to summarize; - for stdin")
    p.add_argument("--tool", required=True, help="the tool that produced the output")
    p.add_argument("--command", dest="tool_command", default=None, help="what ran")
    p.add_argument("--query", default=None, help="what the agent is looking for")
    p.add_argument("--session", default="cli", help="session id (default: cli)")
    p.add_argument("--batch", action="store_true", help="use the batch queue (no session gate)")
    p.add_argument("--no-wait", action="store_true", help="print the job id and return")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the result")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--budget-chars", type=int, default=None, help="this job's local budget")
    p.add_argument("--max-summary-chars", type=int, default=None, help="longest summary")
    p.add_argument("--model", default=None, help="this job's model (TERSIFY_JOB_MODELS)")
    p.add_argument("--no-summarize", action="store_true", help="hand the output back as it is")
    p.add_argument("--callback-url", default=None, help="POST the signed result here")
    p.set_defaults(run=_submit)

    p = sub.add_parser("result", help="print a job's result")
    p.add_argument("job_id")
    p.add_argument("--wait", type=float, default=0.0, help="seconds to wait for it")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_result)


def read_capped(name: str, max_bytes: int) -> bytes:
    """The file (``-``: stdin), read no further than one byte past ``max_bytes``.

    ``OutputTooLargeError`` past the cap: a huge pipe is refused without being held in memory.
    """
    if name == "-":
        data = sys.stdin.buffer.read(max_bytes + 1)
    else:
        with Path(name).open("rb") as handle:
            data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise OutputTooLargeError(f"the output is over the cap of {max_bytes} bytes")
    return data


def _submit(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.client import Producer

    data = read_capped(args.file, settings.max_output_bytes)
    with Producer(settings) as producer:
        handle = producer.submit(
            session_id=args.session,
            tool_name=args.tool,
            output=data,
            command=args.tool_command,
            query=args.query,
            queue=Queue.BATCH if args.batch else Queue.INTERACTIVE,
            options=_options(args),
        )
        if args.no_wait and not handle.done:
            print(handle.job_id)
            return 0
        if not handle.done:
            warn_if_unserved(producer, Queue.BATCH if args.batch else Queue.INTERACTIVE)
        _print_result(handle.wait(args.timeout), as_json=args.json)
    return 0


def _result(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.client import Producer

    with Producer(settings) as producer:
        result = producer.get(args.job_id)
        if result is None and args.wait:
            queue = producer.job_queue(args.job_id)
            if queue is not None:
                warn_if_unserved(producer, queue)
            result = producer.wait(args.job_id, args.wait)
        if result is None:
            print(f"tersify: job {args.job_id} is still running", file=sys.stderr)
            return 2
        _print_result(result, as_json=args.json)
    return 0


def _options(args: argparse.Namespace) -> dict[str, object] | None:
    options = {
        "budget_chars": args.budget_chars,
        "max_summary_chars": args.max_summary_chars,
        "model": args.model,
        "callback_url": args.callback_url,
    }
    chosen: dict[str, object] = {k: v for k, v in options.items() if v is not None}
    if args.no_summarize:
        chosen["summarize"] = False
    return chosen or None


def warn_if_unserved(producer: Producer, queue: Queue) -> None:
    """Say at once on stderr when no live worker takes jobs from ``queue`` (then wait anyway)."""
    from tersify.client.liveness import no_worker_warning

    if producer.live_workers(queue) == 0:
        print(f"tersify: warning: {no_worker_warning(queue)}", file=sys.stderr, flush=True)


def _print_result(result: SummaryResult, *, as_json: bool) -> None:
    if as_json:
        print(result.model_dump_json())
        return
    reason = f" fallback_reason={result.fallback_reason.value}" if result.fallback_reason else ""
    print(
        f"# {result.tool_type.value} · {result.method.value} · "
        f"{result.chars_in} → {result.chars_out} chars{reason}",
        file=sys.stderr,
    )
    print(result.text)
