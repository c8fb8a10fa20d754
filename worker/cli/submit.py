"""``tersify submit`` and ``tersify result``: one tool output through the queue, as a user would."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from producer.contract import SummaryResult
from producer.errors import OutputTooLargeError
from producer.settings import Settings


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
    from producer.client import Producer
    from producer.contract import Queue

    data = read_capped(args.file, settings.max_output_bytes)
    with Producer(settings) as producer:
        handle = producer.submit(
            session_id=args.session,
            tool_name=args.tool,
            output=data,
            command=args.tool_command,
            query=args.query,
            queue=Queue.BATCH if args.batch else Queue.INTERACTIVE,
        )
        if args.no_wait and not handle.done:
            print(handle.job_id)
            return 0
        _print_result(handle.wait(args.timeout), as_json=args.json)
    return 0


def _result(args: argparse.Namespace, settings: Settings) -> int:
    from producer.client import Producer

    with Producer(settings) as producer:
        result = producer.wait(args.job_id, args.wait) if args.wait else producer.get(args.job_id)
        if result is None:
            print(f"tersify: job {args.job_id} is still running", file=sys.stderr)
            return 2
        _print_result(result, as_json=args.json)
    return 0


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
