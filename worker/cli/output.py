"""``tersify output``: print lines of the full output behind a result, by its ``output_ref``."""

from __future__ import annotations

import argparse
import sys

from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.cli.failures import Failure


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``output`` subcommand."""
    p = sub.add_parser("output", help=summary("output"))
    p.add_argument("ref", help="the result's output_ref")
    p.add_argument(
        "--from",
        dest="first",
        type=int,
        default=1,
        metavar="LINE",
        help="first line to print, numbered as printed, from 1 (default 1)",
    )
    p.add_argument("--limit", type=int, default=200, help="most lines (default 200)")
    p.add_argument("--grep", default=None, help="only lines containing this text (any case)")
    p.add_argument("--session", default=None, help="refuse an output of any other session")
    p.add_argument("--json", action="store_true", help="print the range as one JSON object")
    p.set_defaults(run=_output)


def _output(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.client import Producer

    if args.first < 1:
        raise Failure(f"--from {args.first}: lines are numbered from 1")
    with Producer(settings) as producer:
        found = producer.read_output(
            args.ref, args.first - 1, args.limit, grep=args.grep, session_id=args.session
        )
    if not found.lines and args.grep is None and args.first > found.total_lines:
        raise Failure(
            f"--from {args.first} is past the end: the output has {found.total_lines:,} lines "
            f"(tersify output {args.ref} --from {max(1, found.total_lines - args.limit + 1)} "
            "prints the last ones)"
        )
    if args.json:
        print(found.model_dump_json())
        return 0
    width = len(str(found.total_lines))
    for line in found.lines:
        print(f"{line.number:>{width}}\t{line.text}")
    if found.next_offset is not None:
        more = (
            f"… {found.total_lines:,} lines in all; more: "
            f"tersify output {args.ref} --from {found.next_offset + 1}"
        )
        print(more, file=sys.stderr)
    return 0
