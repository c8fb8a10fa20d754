"""``tersify gateway --listen HOST:PORT``: a model-API gateway that summarizes tool results."""

from __future__ import annotations

import argparse
import dataclasses

from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.cli.listen import bound, listen_address, serve, shown


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``gateway`` subcommand."""
    p = sub.add_parser(
        "gateway",
        help=summary("gateway"),
        description="Forward Anthropic Messages and OpenAI Chat Completions / Responses requests "
        "to the configured upstreams, their large tool results replaced by tersify's summaries "
        "(docs/INTEGRATION.md). Point an agent's base URL at it.",
    )
    p.add_argument(
        "--listen",
        default="127.0.0.1:8787",
        metavar="HOST:PORT",
        help="address to serve on (default 127.0.0.1:8787)",
    )
    p.set_defaults(run=_gateway)


def _gateway(args: argparse.Namespace, settings: Settings) -> int:
    import structlog
    import uvicorn

    from tersify.worker.gateway.app import Gateway
    from tersify.worker.gateway.limits import GatewayProtocol, gateway_limits
    from tersify.worker.preflight.checks import settings_check
    from tersify.worker.runtime.logconfig import configure_logging

    host, port = listen_address(args.listen)
    sock = bound(host, port, "--listen")
    configure_logging(settings)
    limits = GatewayProtocol.configure(gateway_limits(settings))  # the fd limit raised first
    structlog.get_logger("tersify.gateway").info(
        "gateway_connection_limits", **dataclasses.asdict(limits)
    )
    for found in settings_check(settings):  # a misspelled TERSIFY_* name, said once at start
        structlog.get_logger("tersify.preflight").warning(
            "startup_check_warned", check=found.check, detail=found.detail
        )
    config = uvicorn.Config(
        Gateway(settings),
        http=GatewayProtocol,  # uvicorn's h11 with a connection cap and request-read deadlines
        backlog=limits.backlog,
        lifespan="on",
        log_config=None,  # logging is structlog's
        access_log=False,  # a path or header may name a session; the metrics count requests
        server_header=False,
        timeout_graceful_shutdown=int(settings.gateway_wait_seconds) + 5,
    )
    structlog.get_logger("tersify.gateway").info(
        "gateway_listening", url=f"http://{shown(host, port)}"
    )
    serve(config, sock)
    return 0
