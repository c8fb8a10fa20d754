"""``tersify mcp-proxy -- COMMAND [ARGS…]``: put tersify in front of any MCP server."""

from __future__ import annotations

import argparse
import socket

import structlog

from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.cli.failures import Failure
from tersify.worker.cli.listen import bound, listen_address, shown


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mcp-proxy`` subcommand."""
    p = sub.add_parser(
        "mcp-proxy",
        help=summary("mcp-proxy"),
        description="Start the MCP server COMMAND and serve its tools over stdio (or streamable "
        "HTTP with --listen), long text results replaced by tersify's summaries, plus "
        "tersify_read to read the exact output back.",
    )
    p.add_argument(
        "--listen", default=None, metavar="HOST:PORT", help="serve streamable HTTP at /mcp"
    )
    p.add_argument("--name", default="tersify-proxy", help="the server name the agent sees")
    p.add_argument("server", nargs=argparse.REMAINDER, help="-- then the MCP server's command")
    p.set_defaults(run=_mcp_proxy)


def _mcp_proxy(args: argparse.Namespace, settings: Settings) -> int:
    import anyio

    from tersify.worker.cli.doctor import preflight
    from tersify.worker.preflight.checks import Role
    from tersify.worker.runtime.logconfig import configure_logging

    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not command:
        raise Failure("give the MCP server's command: tersify mcp-proxy -- COMMAND [ARGS…]")
    address = listen_address(args.listen) if args.listen else None
    listening = (address, bound(*address, "--listen")) if address else None
    configure_logging(settings)
    preflight(settings, Role.MCP)
    try:
        anyio.run(_serve, command, settings, args.name, listening)
    finally:
        if listening is not None:
            listening[1].close()
    return 0


async def _serve(
    command: list[str],
    settings: Settings,
    name: str,
    listening: tuple[tuple[str, int], socket.socket] | None,
) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    from tersify.worker.mcp.proxy import build_server, connected

    async with connected(command, settings) as proxy:
        async with anyio.create_task_group() as serving:
            server = build_server(proxy, name)
            if listening is None:
                # stdin is read on a thread no cancel reaches: the proxy answers each call with
                # the server's end and stops when the agent goes
                serving.start_soon(proxy.watch)
                async with stdio_server() as (read, write):
                    await server.run(read, write, server.create_initialization_options())
            else:
                import uvicorn

                (host, port), sock = listening
                app = server.streamable_http_app(host=host)
                http = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
                serving.start_soon(proxy.watch, lambda: setattr(http, "should_exit", True))
                structlog.get_logger("tersify.mcp").info(
                    "mcp_proxy_listening", url=f"http://{shown(host, port)}/mcp", server=command[0]
                )
                await http.serve(sockets=[sock])
            serving.cancel_scope.cancel()
        ended = proxy.ended()
    if ended is not None:  # raised out here: inside, the SDK's task groups would wrap it
        raise ended
