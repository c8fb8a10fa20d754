"""``tersify forget SESSION``: delete everything held for a session, in Redis and on this host."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tersify.settings import Settings
from tersify.worker.cli.commands import summary


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``forget`` subcommand."""
    p = sub.add_parser("forget", help=summary("forget"))
    p.add_argument("session")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(run=_forget)


def _forget(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.client import Producer
    from tersify.worker.store.sessionlog import forget_files

    directory = Path(settings.session_log_dir)
    with Producer(settings) as producer:
        report = producer.forget(args.session)
    report.log_files = forget_files(directory, args.session)
    if not directory.is_dir():
        print(
            f"tersify forget: warning: {directory} does not exist, so no log file was deleted "
            "here; session logs are where workers write them (TERSIFY_SESSION_LOG_DIR on each "
            "worker host)",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps({**report.model_dump(mode="json"), "log_dir": str(directory)}))
        return 0
    print(
        f"forgot session {report.session_id}: {report.jobs} job(s), {report.redis_keys} Redis "
        f"key(s), {report.list_entries} list entr(ies), {report.log_files} log file(s) "
        f"in {directory}"
    )
    return 0
