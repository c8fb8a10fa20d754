"""``tersify cancel``: cancel a job (dropped when queued, ended with the fallback when running)."""

from __future__ import annotations

import argparse

from tersify.settings import Settings
from tersify.worker.cli.commands import summary


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``cancel`` subcommand."""
    p = sub.add_parser("cancel", help=summary("cancel"))
    p.add_argument("job_id")
    p.add_argument("--json", action="store_true", help="print what happened as one JSON object")
    p.set_defaults(run=_cancel)


def _cancel(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.client import Producer

    with Producer(settings) as producer:
        done = producer.cancel(args.job_id)
    if args.json:
        print(done.model_dump_json())
    else:
        reason = done.result.fallback_reason
        print(
            f"{done.job_id}: was {done.state.value}; result {done.result.method.value}"
            + (f" ({reason.value})" if reason else "")
        )
    return 0
