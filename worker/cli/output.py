"""``tersify output``: print lines of the full output behind a result, by its ``output_ref``."""

from __future__ import annotations

import argparse
import sys

from tersify.settings import Settings


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``output`` subcommand."""
    p = sub.add_parser("output", help="print lines of a result's full output (by output_ref)")
    p.add_argument("ref", help="the result's output_ref")
    p.add_argument("--offset", type=int, default=0, help="first line, 0-based (default 0)")
    p.add_argument("--limit", type=int, default=200, help="most lines (default 200)")
    p.add_argument("--grep", default=None, help="only lines containing this text (any case)")
    p.add_argument("--session", default=None, help="refuse an output of any other session")
    p.add_argument("--json", action="store_true", help="print the range as one JSON object")
    p.set_defaults(run=_output)


def _output(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.client import Producer

    with Producer(settings) as producer:
        found = producer.read_output(
            args.ref, args.offset, args.limit, grep=args.grep, session_id=args.session
        )
    if args.json:
        print(found.model_dump_json())
        return 0
    width = len(str(found.total_lines))
    for line in found.lines:
        print(f"{line.number:>{width}}\t{line.text}")
    if found.next_offset is not None:
        more = f"… more from --offset {found.next_offset} of {found.total_lines} lines"
        print(more, file=sys.stderr)
    return 0
