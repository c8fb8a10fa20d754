"""``tersify deadletters list|show|replay|purge``: the queue entries workers refused."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime

from tersify.contract import DeadLetterReason, Queue
from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.cli.failures import ExitCode, Failure

REASONS = [reason.value for reason in DeadLetterReason]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``deadletters`` subcommand."""
    dl = sub.add_parser("deadletters", help=summary("deadletters"))
    dsub = dl.add_subparsers(required=True, metavar="ACTION")
    p = dsub.add_parser("list", help="the newest records: id, when, reason, queue, detail")
    p.add_argument("--reason", choices=REASONS)
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(run=_list)
    p = dsub.add_parser("show", help="one record in full, as JSON")
    p.add_argument("id")
    p.set_defaults(run=_show)
    p = dsub.add_parser("replay", help="enqueue a job again, with a new id, if its output is kept")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--queue", choices=[q.value for q in Queue], help="else the job's own queue")
    p.set_defaults(run=_replay)
    p = dsub.add_parser("purge", help="remove records: the given ids, one reason's, or --all")
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--reason", choices=REASONS)
    p.add_argument("--all", action="store_true", help="every record")
    p.set_defaults(run=_purge)


def _list(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.store.redis_url import redis_client
    from tersify.worker.jobs import deadletter

    client = redis_client(settings)
    try:
        found = deadletter.records(client, args.reason)[: max(args.limit, 0)]
    finally:
        client.close()
    rows: list[tuple[str, ...]] = []
    for record in found:
        fields = {k: record.fields.get(k) for k in ("id", "at", "reason", "queue", "detail")}
        fields["replayable"] = isinstance(record.fields.get("job"), dict)
        if args.json:
            print(json.dumps(fields))
            continue
        when = _when(fields["at"])
        replay = "yes" if fields["replayable"] else "no"
        rows.append(
            (
                str(fields["id"] or "-"),
                when,
                str(fields["reason"]),
                str(fields["queue"] or "-"),
                replay,
                str(fields["detail"] or ""),
            )
        )
    if not args.json:
        _table(rows, args.reason)
    return 0


HEADER = ("ID", "WHEN (UTC)", "REASON", "QUEUE", "REPLAYABLE", "DETAIL")


def _table(rows: list[tuple[str, ...]], reason: str | None) -> None:
    """The records under a header, columns aligned; a sentence when there are none."""
    if not rows:
        which = f" with reason {reason}" if reason else ""
        print(f"no dead letters{which}: every queue entry was taken")
        return
    widths = [max(len(row[i]) for row in (HEADER, *rows)) for i in range(len(HEADER) - 1)]
    for row in (HEADER, *rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[-1]]))


def _when(at: object) -> str:
    """A record's time as text; ``-`` when the record's ``at`` is not a time."""
    try:
        return datetime.fromtimestamp(float(at), UTC).strftime("%Y-%m-%d %H:%M:%S")  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, OSError):
        return "-"


def _show(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.store.redis_url import redis_client
    from tersify.worker.jobs import deadletter

    client = redis_client(settings)
    try:
        record = deadletter.find(client, args.id)
    finally:
        client.close()
    if record is None:
        raise Failure(f"no dead letter has the id {args.id}", ExitCode.NO)
    print(json.dumps(record.fields, indent=2))
    return 0


def _replay(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.client import Producer
    from tersify.store.redis_url import redis_client
    from tersify.worker.jobs import deadletter

    client = redis_client(settings)
    failed = 0
    try:
        with Producer(settings) as producer:
            for record_id in args.ids:
                queue = Queue(args.queue) if args.queue else None
                done = deadletter.replay(client, producer, record_id, queue)
                if done.job_id is not None:
                    print(f"{record_id}: replayed as job {done.job_id}")
                else:
                    failed += 1
                    print(f"{record_id}: not replayed: {done.why_not}")
    finally:
        client.close()
    return 1 if failed else 0


def _purge(args: argparse.Namespace, settings: Settings) -> int:
    from tersify.store.redis_url import redis_client
    from tersify.worker.jobs import deadletter

    if not (args.ids or args.reason or args.all):
        raise Failure("say which records to purge: IDs, --reason REASON or --all")
    client = redis_client(settings)
    try:
        found = deadletter.records(client, args.reason)
        if args.ids:
            found = [r for r in found if r.id in set(args.ids)]
        removed = deadletter.purge(client, found)
    finally:
        client.close()
    print(f"purged {removed} dead letter(s)")
    return 0
