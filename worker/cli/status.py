"""``tersify status``: queues, workers, gated sessions and recent failures, read from Redis.

Every cell is escaped before rich renders it: what Redis holds came from clients and models."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import redis
from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from tersify.errors import RedisUnavailableError
from tersify.settings import Settings
from tersify.store import keys
from tersify.store.redis_url import redis_client
from tersify.worker.cli.commands import summary
from tersify.worker.metrics import rereads
from tersify.worker.metrics import snapshot as snap
from tersify.worker.metrics.jobs import RECENT_WINDOW_SECONDS


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``status`` subcommand."""
    p = sub.add_parser("status", help=summary("status"))
    p.add_argument("--json", action="store_true", help="print one JSON object and exit")
    p.add_argument(
        "--watch", type=float, default=None, metavar="SECONDS", help="refresh every SECONDS"
    )
    p.add_argument(
        "--window",
        type=float,
        default=5.0,
        metavar="MINUTES",
        help=f"fallback-rate and re-read window (at most {RECENT_WINDOW_SECONDS // 60})",
    )
    p.add_argument("--failures", type=int, default=10, help="recent failures to show")
    p.set_defaults(run=run)


def snapshot(client: redis.Redis, *, window_seconds: float, failures: int) -> dict[str, Any]:
    """Everything ``status`` shows, as one JSON-ready object."""
    now = snap.server_now(client)
    window = min(window_seconds, RECENT_WINDOW_SECONDS)
    return {
        "at": datetime.fromtimestamp(now, UTC).isoformat(),
        "queues": snap.queue_depths(client),
        "in_flight": snap.in_flight(client),
        "workers": snap.workers(client, now),
        "gated_sessions": snap.gated_as_dicts(snap.gated_sessions(client, now)),
        "circuits": snap.circuit_states(client),
        "fallback_rate": snap.fallback_rate(client, now, window),
        "rereads": rereads.share(client, now, window),
        "recent_failures": snap.recent_fallbacks(client, failures),
        "dead_letters": snap.dead_letters(client, failures),
        "webhooks_waiting": int(client.zcard(keys.WEBHOOKS)),  # type: ignore[arg-type]
        "gateway": snap.gateway_savings(client),
    }


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Print the status once (table or JSON), or refresh it until interrupted with ``--watch``."""
    client = redis_client(settings)
    try:

        def take() -> dict[str, Any]:
            return snapshot(client, window_seconds=args.window * 60, failures=args.failures)

        if args.json:
            print(json.dumps(_read(take)))
            return 0
        console = Console()
        if args.watch is None:
            console.print(render(_read(take)))
            return 0
        if not console.is_terminal:  # a pipe or a file: one full snapshot per refresh
            while True:  # ends with Ctrl-C (exit 130 in the CLI) or a closed pipe (141)
                console.print(render(_read(take)))
                console.file.flush()
                time.sleep(max(0.2, args.watch))
        with Live(render(_read(take)), console=console, auto_refresh=False) as live:
            while True:  # ends with Ctrl-C (exit 130 in the CLI)
                time.sleep(max(0.2, args.watch))
                live.update(render(_read(take)), refresh=True)
    finally:
        client.close()


def _read(take: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = take()
    except redis.RedisError as exc:
        raise RedisUnavailableError(f"could not read status: {type(exc).__name__}") from None
    return result


def render(status: dict[str, Any]) -> Group:
    """The status as rich tables."""
    queues = _table(
        f"tersify at {status['at']}",
        ("queue", "waiting"),
        [
            *([name, depth] for name, depth in status["queues"].items()),
            ["in flight (all workers)", status["in_flight"]],
            ["webhook deliveries waiting", status.get("webhooks_waiting", 0)],
        ],
    )
    workers = _table(
        f"workers online: {len(status['workers'])}",
        ("hostname", "pid", "pool", "concurrency", "last beat"),
        (
            [
                w.get("hostname"),
                w.get("pid"),
                w.get("pool"),
                w.get("concurrency"),
                f"{w['seen_seconds_ago']:.1f}s ago",
            ]
            for w in status["workers"]
        ),
    )
    gated = _table(
        f"sessions gated now: {len(status['gated_sessions'])}",
        ("session", "jobs", "held inputs", "closed for"),
        (
            [s["session_id"], s["jobs"], s["held_inputs"], _ago(s["closed_seconds"])]
            for s in status["gated_sessions"][:20]
        ),
    )
    failures = _failures(status)
    return Group(
        queues, workers, gated, failures, _rereads(status["rereads"]), *_gateway(status["gateway"])
    )


def _failures(status: dict[str, Any]) -> Table:
    """Recent fallbacks and dead letters, under the fallback rate and the circuits."""
    rate = status["fallback_rate"]
    fallbacks = [
        [
            _when(f["at"]),
            f["reason"],
            f["tool_type"],
            f.get("provider") or "-",
            f["session_id"],
            f.get("detail") or "",
        ]
        for f in status["recent_failures"]
    ]
    dead = (
        [
            _when(d.get("at") or 0),
            f"dead letter: {d['reason']}",
            "-",
            "-",
            "-",
            d.get("detail") or "",
        ]
        for d in status["dead_letters"]
    )
    return _table(
        f"fallbacks: {rate['fallbacks']}/{rate['completed']} jobs ({rate['rate']:.1%}) "
        f"in the last {rate['window_seconds'] / 60:g} min · circuits: "
        + escape(", ".join(f"{p} {s}" for p, s in status["circuits"].items())),
        ("when", "reason", "tool type", "provider", "session", "detail"),
        [*fallbacks, *dead],
    )


def _gateway(found: dict[str, Any]) -> list[Table]:
    """The gateway's savings, when it has served anything."""
    totals = found["totals"]
    if not totals.get("requests"):
        return []
    title = (
        f"gateway: {totals['requests']} requests, {totals.get('rewritten', 0)} results "
        f"summarized ({totals.get('reruns', 0)} as what changed since an earlier run), "
        f"{totals.get('reused', 0)} reused · saved "
        f"{totals.get('tokens_before', 0) - totals.get('tokens_after', 0)} tokens "
        f"(${totals.get('saved_usd', 0.0):.4f})"
    )
    rows = (
        [
            s["session_id"],
            s.get("requests", 0),
            s.get("tokens_before", 0),
            s.get("tokens_after", 0),
            f"${s.get('saved_usd', 0.0):.4f}",
            _when(s["last_request"]),
        ]
        for s in found["sessions"]
    )
    columns = ("session", "requests", "tokens before", "tokens after", "saved", "last")
    return [_table(title, columns, rows)]


def _rereads(share: dict[str, Any]) -> Table:
    total = share["total"]
    title = (
        f"summaries read back: {share['reread']}/{share['summaries']} ({share['share']:.1%}) "
        f"of those finished in the last {share['window_seconds'] / 60:g} min · "
        f"{total['reread']}/{total['summaries']} ({total['share']:.1%}) and "
        f"{total['reads']} reads in all"
    )
    rows = (
        [k["tool_type"], k["method"], k["summaries"], k["reread"], f"{k['share']:.1%}", k["reads"]]
        for k in share["by_kind"]
    )
    columns = ("tool type", "method", "summaries", "read back", "share", "reads")
    return _table(title, columns, rows)


def _table(title: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Table:
    """A table of ``rows`` whose cells are text as Redis holds it: escaped, never read as rich
    markup (a fallback's detail may hold ``[/usr/local/bin]``)."""
    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for cells in rows:
        table.add_row(*(escape(str(cell)) for cell in cells))
    return table


def _ago(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.1f}min"


def _when(at: float) -> str:
    return datetime.fromtimestamp(float(at), UTC).strftime("%H:%M:%S")
