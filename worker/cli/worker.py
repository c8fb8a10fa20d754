"""``tersify worker``: run a worker process, or N of them under a supervisor; ``--check``."""

from __future__ import annotations

import argparse
import os
import sys

from tersify.settings import Settings
from tersify.worker.cli.commands import summary


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``worker`` subcommand."""
    p = sub.add_parser("worker", help=summary("worker"))
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
    p.add_argument(
        "-E",
        "--task-events",
        action="store_true",
        help="send Celery task events, for Flower (TERSIFY_WORKER_SEND_EVENTS)",
    )
    # the supervisor's children: their parent checked the configuration and logged it
    p.add_argument("--no-preflight", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(run=_worker)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _worker(args: argparse.Namespace, settings: Settings) -> int:
    # a base install lacks the worker extra: say so before any line says the worker is set
    import celery  # noqa: F401

    processes = args.processes or settings.worker_processes
    if args.task_events:
        settings = settings.model_copy(update={"worker_send_events": True})
    if not args.check and not args.no_preflight:
        _preflight(args, settings, processes)
    if processes > 1:
        return _worker_processes(args, settings, processes)
    if (args.pool or settings.worker_pool) == "gevent" and not args.check:
        # gevent must patch the standard library before anything imports it; Celery's own
        # launcher does that first thing, so hand over to it.
        launcher = [sys.executable, "-m", "celery", "-A", "tersify.worker.broker.main", "worker"]
        launcher += ["--pool", "gevent", "--queues", args.queues, "--without-mingle"]
        slots = str(args.concurrency or settings.worker_concurrency)
        launcher += ["--without-gossip", "--concurrency", slots]
        launcher += ["--loglevel", args.loglevel or settings.log_level]
        launcher += ["--hostname", args.hostname] if args.hostname else []
        env = settings.child_env(
            worker_pool="gevent",
            worker_concurrency=slots,
            worker_send_events=str(settings.worker_send_events).lower(),
        )
        os.execve(sys.executable, launcher, env)  # noqa: S606 - replaces this process
    if args.check:
        from tersify.worker.runtime.heartbeat import check_alive

        alive, detail = check_alive(settings, args.hostname)
        print(detail)
        return 0 if alive else 1
    from tersify.worker.broker.app import create_app

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


def _preflight(args: argparse.Namespace, settings: Settings, processes: int) -> None:
    """Refuse a configuration that cannot work; log what this worker runs with."""
    import structlog

    from tersify.worker.cli.doctor import preflight
    from tersify.worker.preflight.checks import Role, configuration
    from tersify.worker.runtime.logconfig import configure_logging

    configure_logging(settings)
    preflight(settings, Role.WORKER)
    structlog.get_logger("tersify.worker").info(
        "worker_configured",
        queues=args.queues,
        pool=args.pool or settings.worker_pool,
        concurrency=args.concurrency or settings.worker_concurrency,
        processes=processes,
        **configuration(settings),
    )


def _worker_processes(args: argparse.Namespace, settings: Settings, processes: int) -> int:
    from tersify.worker.processes.supervisor import Supervisor, child_names
    from tersify.worker.runtime.heartbeat import check_alive, default_hostname

    names = child_names(args.hostname or default_hostname(), processes)
    if args.check:  # alive when every process is
        results = [check_alive(settings, name) for name in names]
        for _, detail in results:
            print(detail)
        return 0 if all(alive for alive, _ in results) else 1
    base = [sys.executable, "-m", "tersify.worker.cli", "worker", "--processes", "1"]
    base += ["--queues", args.queues, "--no-preflight"]
    base += ["--task-events"] if settings.worker_send_events else []
    for flag, value in (("--concurrency", args.concurrency), ("--pool", args.pool)):
        base += [flag, str(value)] if value is not None else []
    base += ["--loglevel", args.loglevel] if args.loglevel else []

    def command(index: int, name: str) -> tuple[list[str], dict[str, str]]:
        # One metrics endpoint per process: PORT, PORT+1, … (0 keeps them all off).
        port = settings.metrics_port and settings.metrics_port + index - 1
        return [*base, "--hostname", name], settings.child_env(metrics_port=str(port))

    return Supervisor(names, command).run()
