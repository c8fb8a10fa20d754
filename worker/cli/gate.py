"""``tersify gate status|wait``: a session's input gate, from the shell."""

from __future__ import annotations

import argparse

from tersify.settings import Settings
from tersify.worker.cli.commands import summary


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``gate`` subcommand."""
    gate = sub.add_parser("gate", help=summary("gate"))
    gsub = gate.add_subparsers(required=True, metavar="ACTION")
    p = gsub.add_parser("status", help="is the gate open, and which jobs hold it")
    p.add_argument("session")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_gate_status)
    p = gsub.add_parser("wait", help="wait until the gate opens (exit 0) or time out (exit 1)")
    p.add_argument("session")
    p.add_argument("--timeout", type=float, default=60.0)
    p.set_defaults(run=_gate_wait)


def _gate_status(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.gate import SessionGate
    from tersify.store.redis_url import redis_client

    client = redis_client(settings, decode=True)
    try:
        status = SessionGate(client, settings).status(args.session)
    finally:
        client.close()
    if args.json:
        print(status.model_dump_json())
        return 0
    print(f"session {status.session_id}: {'open' if status.open else 'closed'}")
    if status.jobs:
        print("  JOB  TOOL TYPE  AGE  EXPIRES IN")
    for job in status.jobs:
        print(
            f"  {job.job_id}  {job.tool_type or '-'}  age {job.age_seconds:.1f}s  "
            f"expires in {job.expires_in_seconds:.1f}s"
        )
    if status.held_inputs:
        print(f"  {status.held_inputs} held input(s)")
    return 0


def _gate_wait(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.gate import SessionGate
    from tersify.store.redis_url import redis_client

    client = redis_client(settings, decode=True)
    try:
        is_open = SessionGate(client, settings).wait_open(args.session, args.timeout)
    finally:
        client.close()
    print("open" if is_open else "closed")
    return 0 if is_open else 1
