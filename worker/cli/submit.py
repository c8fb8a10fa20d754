"""``tersify submit`` and ``tersify result``: one tool output through the queue, as a user would."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from tersify.contract import JobOptions, Queue, SummaryResult
from tersify.errors import ResultTimeoutError
from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.cli.failures import ExitCode, Failure

if TYPE_CHECKING:
    from tersify.client import Producer
    from tersify.text.excerpt import Excerpt

READ_BYTES = 1 << 20
"""How much of the input one read takes."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``submit`` and ``result`` subcommands."""
    p = sub.add_parser("submit", help=summary("submit"))
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
    p.add_argument(
        "--no-rerun",
        action="store_true",
        help="summarize on its own, never as what changed since an earlier run",
    )
    p.add_argument("--callback-url", default=None, help="POST the signed result here")
    p.set_defaults(run=_submit)

    p = sub.add_parser("result", help=summary("result"))
    p.add_argument("job_id")
    p.add_argument("--wait", type=float, default=0.0, help="seconds to wait for it")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_result)


def read_output(name: str, settings: Settings, args: argparse.Namespace) -> Excerpt:
    """The file (``-``: stdin) read in one streaming pass: whole, or past
    ``TERSIFY_MAX_OUTPUT_BYTES`` its head, tail and the lines that matter (memory stays bounded
    by ``TERSIFY_MAX_STORED_OUTPUT_BYTES``, whatever the size)."""
    from tersify.client.jobs import typer
    from tersify.text.excerpt import excerpt_from_stream

    with sys.stdin.buffer if name == "-" else Path(name).open("rb") as stream:
        return excerpt_from_stream(
            iter(lambda: stream.read(READ_BYTES), b""),
            settings.max_output_bytes,
            settings.max_stored_output_bytes,
            typer(args.tool, args.tool_command),
            args.query,
        )


def _submit(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.client import Producer

    options = _options(args)
    output = read_output(args.file, settings, args)
    queue = Queue.BATCH if args.batch else Queue.INTERACTIVE
    with Producer(settings) as producer:
        handle = producer.submit(
            session_id=args.session,
            tool_name=args.tool,
            output=output,
            command=args.tool_command,
            query=args.query,
            queue=queue,
            options=options,
        )
        if args.no_wait and handle.queued:  # however soon a worker may finish it
            print(handle.job_id)
            return 0
        if not handle.done:
            warn_if_unserved(producer, queue)
        try:
            result = handle.wait(args.timeout)
        except ResultTimeoutError:
            raise not_ready(producer, handle.job_id, args.timeout) from None
        print_result(result, as_json=args.json)
    return 0


def _result(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.client import Producer

    with Producer(settings) as producer:
        result = producer.get(args.job_id)
        if result is None and args.wait:
            queue = producer.job_queue(args.job_id)
            if queue is not None:
                warn_if_unserved(producer, queue)
            try:
                result = producer.wait(args.job_id, args.wait)
            except ResultTimeoutError:
                raise not_ready(producer, args.job_id, args.wait) from None
        if result is None:
            raise not_ready(producer, args.job_id, None)
        print_result(result, as_json=args.json)
    return 0


def not_ready(producer: Producer, job_id: str, waited: float | None) -> Failure:
    """Why a job has no result yet: running, queued, or queued with no live worker for it."""
    from tersify.client.liveness import HEARTBEAT_TTL_SECONDS

    after = f" after {waited:g}s" if waited else ""
    again = f"`tersify result {job_id} --wait 60` waits for it"
    if producer.job_started(job_id):
        return Failure(f"job {job_id} is running{after}: {again}", ExitCode.NOT_READY)
    queue = producer.job_queue(job_id) or Queue.INTERACTIVE
    if producer.live_workers(queue) == 0:
        return Failure(
            f"job {job_id} is queued — no live worker serves {queue.value} (no heartbeat in "
            f"{HEARTBEAT_TTL_SECONDS}s): start one with `tersify worker`",
            ExitCode.NOT_READY,
        )
    return Failure(
        f"job {job_id} is queued{after}, waiting for a free worker on {queue.value}: {again}",
        ExitCode.NOT_READY,
    )


FLAGS = {
    "budget_chars": "--budget-chars",
    "max_summary_chars": "--max-summary-chars",
    "model": "--model",
    "callback_url": "--callback-url",
}


def _options(args: argparse.Namespace) -> JobOptions | None:
    """The per-job options the flags ask for; a bad value names its flag (exit 2)."""
    chosen: dict[str, object] = {
        name: getattr(args, name) for name in FLAGS if getattr(args, name) is not None
    }
    if args.no_summarize:
        chosen["summarize"] = False
    if args.no_rerun:
        chosen["rerun"] = False
    if not chosen:
        return None
    try:
        return JobOptions.model_validate(chosen)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        name = str(error["loc"][0]) if error["loc"] else ""
        flag = FLAGS.get(name, name)
        message = str(error["msg"]).removeprefix("Value error, ")
        raise Failure(
            f"{flag} {error.get('input')!s}: {message[:1].lower()}{message[1:]}"
        ) from None


def warn_if_unserved(producer: Producer, queue: Queue) -> None:
    """Say at once on stderr when no live worker takes jobs from ``queue`` (then wait anyway)."""
    from tersify.client.liveness import no_worker_warning

    if producer.live_workers(queue) == 0:
        print(f"tersify: warning: {no_worker_warning(queue)}", file=sys.stderr, flush=True)


def print_result(result: SummaryResult, *, as_json: bool) -> None:
    """The summary on stdout; what it is (job, type, method, sizes, output_ref, any cut) on
    stderr, as ``#`` lines: a pipe gets the summary alone."""
    if as_json:
        print(result.model_dump_json())
        return
    reason = f" ({result.fallback_reason.value})" if result.fallback_reason else ""
    lines = [
        f"# job {result.job_id} · {result.tool_type.value} · {result.method.value}{reason} · "
        f"{result.chars_in:,} → {result.chars_out:,} chars"
    ]
    if result.cut is not None:
        cut = result.cut
        lines.append(
            f"# cut: {cut.bytes_in:,} bytes in; summarized {cut.bytes_kept:,} (the first "
            f"{cut.head_lines:,} lines, the last {cut.tail_lines:,}, {cut.kept_between:,} that "
            f"matter of {cut.kept_between + cut.lines_cut:,} between)"
        )
    if result.output_ref is not None:
        lines.append(f"# full output: tersify output {result.output_ref}")
    print("\n".join(lines), file=sys.stderr, flush=True)
    print(result.text)
