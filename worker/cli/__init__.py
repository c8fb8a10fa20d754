"""The ``tersify`` command line: thin wrappers over the producer, the gate and the worker."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from producer.contract import SummaryResult
from producer.errors import ResultTimeoutError, TersifyError
from producer.settings import Settings

Command = Callable[[argparse.Namespace, Settings], int]

# Modules that add their own subcommands: each has ``add_parser(subparsers) -> None`` and sets
# ``run`` (a ``Command``) on its parser. One line per module; keep the list sorted.
COMMAND_MODULES: tuple[str, ...] = (
    "worker.cli.api",
    "worker.cli.eval",
    "worker.cli.reprocess",
    "worker.cli.status",
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tersify`` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    settings = Settings()
    command: Command = args.run
    try:
        return command(args, settings)
    except ResultTimeoutError as exc:
        print(f"tersify: {exc}", file=sys.stderr)
        return 3
    except TersifyError as exc:
        print(f"tersify: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tersify", description=__doc__)
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    p = sub.add_parser("worker", help="run a Celery worker")
    p.add_argument("--queues", default="interactive,batch", help="comma-separated queue names")
    p.add_argument("--concurrency", type=int, default=None, help="in-flight jobs per process")
    p.add_argument(
        "--processes",
        type=_positive,
        default=None,
        help="worker processes, named NODE-1@HOST… (default: TERSIFY_WORKER_PROCESSES, 1)",
    )
    p.add_argument(
        "--pool",
        default=None,
        choices=("threads", "prefork", "solo", "gevent"),
        help="Celery pool (default: TERSIFY_WORKER_POOL, threads)",
    )
    p.add_argument("--loglevel", default=None)
    p.add_argument("--hostname", default=None, help="worker name (default: celery@HOST)")
    p.add_argument(
        "--check", action="store_true", help="exit 0 if this host's worker is alive (no broadcast)"
    )
    p.set_defaults(run=_worker)

    p = sub.add_parser("submit", help="submit a tool output and print its summary")
    p.add_argument("file", nargs="?", default="-", help="the output to summarize; - for stdin")
    p.add_argument("--tool", required=True, help="the tool that produced the output")
    p.add_argument("--command", dest="tool_command", default=None, help="what ran")
    p.add_argument("--query", default=None, help="what the agent is looking for")
    p.add_argument("--session", default="cli", help="session id (default: cli)")
    p.add_argument("--batch", action="store_true", help="use the batch queue (no session gate)")
    p.add_argument("--no-wait", action="store_true", help="print the job id and return")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the result")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(run=_submit)

    p = sub.add_parser("result", help="print a job's result")
    p.add_argument("job_id")
    p.add_argument("--wait", type=float, default=0.0, help="seconds to wait for it")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_result)

    p = sub.add_parser("compact", help="compact a conversation's older turns into one summary")
    p.add_argument("messages", help='JSON file: a list of messages, or {"messages": [...]}')
    p.add_argument("--previous", default=None, help="file holding the previous summary")
    p.add_argument("--session", default="cli")
    p.add_argument("--protect-first", type=int, default=2)
    p.add_argument("--protect-last", type=int, default=6)
    p.add_argument("--timeout", type=float, default=180.0)
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(run=_compact)

    p = sub.add_parser("demo", help="run the bundled examples end to end on a private Redis")
    p.add_argument("--timeout", type=float, default=120.0)
    p.set_defaults(run=_demo)

    gate = sub.add_parser("gate", help="inspect a session's input gate")
    gsub = gate.add_subparsers(required=True, metavar="ACTION")
    p = gsub.add_parser("status", help="is the gate open, and which jobs hold it")
    p.add_argument("session")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_gate_status)
    p = gsub.add_parser("wait", help="wait until the gate opens (exit 0) or time out (exit 1)")
    p.add_argument("session")
    p.add_argument("--timeout", type=float, default=60.0)
    p.set_defaults(run=_gate_wait)

    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _worker(args: argparse.Namespace, settings: Settings) -> int:
    processes = args.processes or settings.worker_processes
    if processes > 1:
        return _worker_processes(args, settings, processes)
    if (args.pool or settings.worker_pool) == "gevent" and not args.check:
        # gevent must patch the standard library before anything imports it; Celery's own
        # launcher does that first thing, so hand over to it.
        launcher = [sys.executable, "-m", "celery", "-A", "worker.broker.main", "worker"]
        launcher += ["--pool", "gevent", "--queues", args.queues, "--without-mingle"]
        slots = str(args.concurrency or settings.worker_concurrency)
        launcher += ["--without-gossip", "--concurrency", slots]
        launcher += ["--loglevel", args.loglevel or settings.log_level]
        launcher += ["--hostname", args.hostname] if args.hostname else []
        env = settings.child_env(worker_pool="gevent", worker_concurrency=slots)
        os.execve(sys.executable, launcher, env)  # noqa: S606 - replaces this process
    if args.check:
        from worker.runtime.heartbeat import check_alive

        alive, detail = check_alive(settings, args.hostname)
        print(detail)
        return 0 if alive else 1
    from worker.broker.app import create_app

    pool = args.pool or settings.worker_pool
    concurrency = args.concurrency or settings.worker_concurrency
    # The flags win over the environment everywhere: Celery's pool, and the runtime's model
    # client stack (sized to the concurrency). Celery reads "--pool prefork" as "not chosen"
    # and would keep the configured pool, so the app is built with the chosen settings.
    chosen = settings.model_copy(update={"worker_pool": pool, "worker_concurrency": concurrency})
    app = create_app(chosen)
    argv = ["worker", "--queues", args.queues, "--without-mingle", "--without-gossip"]
    argv += ["--pool", pool, "--concurrency", str(concurrency)]
    argv += ["--loglevel", args.loglevel or settings.log_level]
    if args.hostname:
        argv += ["--hostname", args.hostname]
    app.worker_main(argv)
    return 0


def _worker_processes(args: argparse.Namespace, settings: Settings, processes: int) -> int:
    from worker.processes.supervisor import Supervisor, child_names
    from worker.runtime.heartbeat import check_alive, default_hostname

    names = child_names(args.hostname or default_hostname(), processes)
    if args.check:  # alive when every process is
        results = [check_alive(settings, name) for name in names]
        for _, detail in results:
            print(detail)
        return 0 if all(alive for alive, _ in results) else 1
    base = [sys.executable, "-m", "worker.cli", "worker", "--processes", "1"]
    base += ["--queues", args.queues]
    for flag, value in (("--concurrency", args.concurrency), ("--pool", args.pool)):
        base += [flag, str(value)] if value is not None else []
    base += ["--loglevel", args.loglevel] if args.loglevel else []

    def command(index: int, name: str) -> tuple[list[str], dict[str, str]]:
        # One metrics endpoint per process: PORT, PORT+1, … (0 keeps them all off).
        port = settings.metrics_port and settings.metrics_port + index - 1
        return [*base, "--hostname", name], settings.child_env(metrics_port=str(port))

    return Supervisor(names, command).run()


def _read_input(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    return Path(name).read_bytes()


def _submit(args: argparse.Namespace, settings: Settings) -> int:
    from producer.client import Producer
    from producer.contract import Queue

    data = _read_input(args.file)
    with Producer(settings) as producer:
        handle = producer.submit(
            session_id=args.session,
            tool_name=args.tool,
            output=data,
            command=args.tool_command,
            query=args.query,
            queue=Queue.BATCH if args.batch else Queue.INTERACTIVE,
        )
        if args.no_wait and not handle.done:
            print(handle.job_id)
            return 0
        _print_result(handle.wait(args.timeout), as_json=args.json)
    return 0


def _result(args: argparse.Namespace, settings: Settings) -> int:
    from producer.client import Producer

    with Producer(settings) as producer:
        result = producer.wait(args.job_id, args.wait) if args.wait else producer.get(args.job_id)
        if result is None:
            print(f"tersify: job {args.job_id} is still running", file=sys.stderr)
            return 2
        _print_result(result, as_json=args.json)
    return 0


def _print_result(result: SummaryResult, *, as_json: bool) -> None:
    if as_json:
        print(result.model_dump_json())
        return
    reason = f" fallback_reason={result.fallback_reason.value}" if result.fallback_reason else ""
    print(
        f"# {result.tool_type.value} · {result.method.value} · "
        f"{result.chars_in} → {result.chars_out} chars{reason}",
        file=sys.stderr,
    )
    print(result.text)


def _compact(args: argparse.Namespace, settings: Settings) -> int:
    import json

    from producer.client import Producer
    from producer.errors import InvalidJobError

    try:
        loaded = json.loads(Path(args.messages).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidJobError(f"cannot read {args.messages}: {exc}") from None
    messages = loaded.get("messages") if isinstance(loaded, dict) else loaded
    if not isinstance(messages, list):
        raise InvalidJobError('expected a JSON list of messages or {"messages": [...]}')
    previous = Path(args.previous).read_text(encoding="utf-8") if args.previous else None
    with Producer(settings) as producer:
        handle = producer.compact(
            session_id=args.session,
            messages=messages,
            previous_summary=previous,
            protect_first=args.protect_first,
            protect_last=args.protect_last,
        )
        result = handle.wait(args.timeout)
    if args.json:
        print(result.model_dump_json())
    else:
        print(
            f"# {result.method.value} · {result.messages_before} → {result.messages_after} "
            f"messages · ~{result.tokens_before} → ~{result.tokens_after} tokens",
            file=sys.stderr,
        )
        print(result.summary)
    return 0


def _demo(args: argparse.Namespace, settings: Settings) -> int:
    from worker.cli.demo import run_demo

    return run_demo(settings, timeout=args.timeout)


def _gate_status(args: argparse.Namespace, settings: Settings) -> int:
    from producer.client import redis_client
    from producer.gate import SessionGate

    client = redis_client(settings, decode=True)
    try:
        status = SessionGate(client, settings).status(args.session)
    finally:
        client.close()
    if args.json:
        print(status.model_dump_json())
        return 0
    print(f"session {status.session_id}: {'open' if status.open else 'closed'}")
    for job in status.jobs:
        print(
            f"  {job.job_id}  {job.tool_type or '-'}  age {job.age_seconds:.1f}s  "
            f"expires in {job.expires_in_seconds:.1f}s"
        )
    if status.held_inputs:
        print(f"  {status.held_inputs} held input(s)")
    return 0


def _gate_wait(args: argparse.Namespace, settings: Settings) -> int:
    from producer.client import redis_client
    from producer.gate import SessionGate

    client = redis_client(settings, decode=True)
    try:
        is_open = SessionGate(client, settings).wait_open(args.session, args.timeout)
    finally:
        client.close()
    print("open" if is_open else "closed")
    return 0 if is_open else 1
