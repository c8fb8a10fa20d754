"""``tersify repair``: remove broken tool pairs from a conversation before it is sent."""

from __future__ import annotations

import argparse
import json
import sys

from tersify.settings import Settings
from tersify.worker.cli.commands import summary


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``repair`` subcommand."""
    p = sub.add_parser("repair", help=summary("repair"))
    p.add_argument("messages", help='JSON file (- for stdin): a list, or {"messages": [...]}')
    p.set_defaults(run=_repair)


def _repair(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.chat.pairs import repair_messages
    from tersify.worker.cli.compact import load_messages

    messages = load_messages(args.messages)
    fixed = repair_messages(messages)
    print(json.dumps(fixed, ensure_ascii=False, indent=2))
    print(f"# {len(messages)} → {len(fixed)} messages", file=sys.stderr)
    return 0
