"""``tersify api``: serve the HTTP API with uvicorn, in one or several processes on one port."""

from __future__ import annotations

import argparse
import sys

import structlog

from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.cli.listen import bound, serve, shown


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``api`` subcommand."""
    p = sub.add_parser("api", help=summary("api"))
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port to bind (default 8080)")
    p.add_argument("--workers", type=int, default=1, help="server processes sharing the port")
    p.set_defaults(run=_serve)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    # the web stack is imported by the command that serves it, not by every `tersify` call
    import uvicorn

    from tersify.worker.api.app import AuthNotConfiguredError, token_table
    from tersify.worker.api.connections import PROTOCOL, api_limits
    from tersify.worker.model.providers.checks import is_loopback_host

    try:
        tokens = token_table(settings)
    except (AuthNotConfiguredError, ValueError) as exc:
        print(f"tersify api: {exc}", file=sys.stderr)
        return 2
    if tokens is None and not is_loopback_host(args.host):
        print("tersify api: without tokens the API binds to loopback only", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("tersify api: --workers must be at least 1", file=sys.stderr)
        return 2
    from tersify.worker.cli.doctor import preflight
    from tersify.worker.preflight.checks import Role
    from tersify.worker.runtime.logconfig import configure_logging

    sock = bound(args.host, args.port, "--port")  # before any line that says it will serve
    configure_logging(settings)
    preflight(settings, Role.API)
    structlog.get_logger("tersify.api").info(
        "api_listening",
        url=f"http://{shown(args.host, args.port)}",
        workers=args.workers,
        auth=tokens is not None,
    )
    if args.workers == 1:  # the app runs in this process: its submits can be traced
        from tersify.worker.runtime.tracing import configure_tracing

        configure_tracing(settings)
    # an import string, so each of --workers processes builds its own app from TERSIFY_*
    config = uvicorn.Config(
        "tersify.worker.api.app:app_from_environment",
        factory=True,
        workers=args.workers,
        log_config=None,  # logging is structlog's (configured in the factory)
        access_log=False,  # the request metrics count requests; paths carry ids
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=5,
        http=PROTOCOL,  # uvicorn's h11 with a connection cap and request-read deadlines
        backlog=api_limits(settings).backlog,
        timeout_keep_alive=settings.api_keep_alive_seconds,
    )
    serve(config, sock)
    return 0
