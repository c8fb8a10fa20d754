"""``tersify compact``: compact a conversation's older turns into one summary."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tersify.settings import Settings
from tersify.worker.cli.commands import summary


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``compact`` subcommand."""
    p = sub.add_parser("compact", help=summary("compact"))
    p.add_argument("messages", help='JSON file: a list of messages, or {"messages": [...]}')
    p.add_argument("--previous", default=None, help="file holding the previous summary")
    p.add_argument("--session", default="cli")
    p.add_argument("--protect-first", type=int, default=2)
    p.add_argument("--protect-last", type=int, default=6)
    p.add_argument("--timeout", type=float, default=180.0)
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(run=_compact)


def load_messages(path: str) -> list[Any]:
    """The message list in a JSON file (``-``: stdin): a list, or ``{"messages": [...]}``."""
    from tersify.errors import InvalidJobError

    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        loaded = json.loads(text)
    except (OSError, ValueError) as exc:
        raise InvalidJobError(f"cannot read {path}: {exc}") from None
    messages = loaded.get("messages") if isinstance(loaded, dict) else loaded
    if not isinstance(messages, list):
        raise InvalidJobError('expected a JSON list of messages or {"messages": [...]}')
    return messages


def _compact(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.client import Producer
    from tersify.contract import Queue
    from tersify.worker.cli.submit import warn_if_unserved

    messages = load_messages(args.messages)
    previous = Path(args.previous).read_text(encoding="utf-8") if args.previous else None
    with Producer(settings) as producer:
        handle = producer.compact(
            session_id=args.session,
            messages=messages,
            previous_summary=previous,
            protect_first=args.protect_first,
            protect_last=args.protect_last,
        )
        warn_if_unserved(producer, Queue.INTERACTIVE)
        result = handle.wait(args.timeout)
    if args.json:
        print(result.model_dump_json())
    else:
        print(
            f"# {result.method.value}"
            + (f" ({result.passthrough_reason.value})" if result.passthrough_reason else "")
            + f" · {result.messages_before} → {result.messages_after} messages"
            f" · ~{result.tokens_before} → ~{result.tokens_after} tokens",
            file=sys.stderr,
        )
        print(result.summary)
    return 0
