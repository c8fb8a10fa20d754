"""The address a serving command listens on (``api``, ``gateway``, ``mcp-proxy --listen``),
bound before the command says it listens: a port in use is one line and exit 2, never a
``listening`` line followed by an OS error."""

from __future__ import annotations

import errno
import socket
from typing import TYPE_CHECKING

from tersify.worker.cli.failures import ExitCode, Failure

if TYPE_CHECKING:
    import uvicorn

_BACKLOG = 2048  # uvicorn's default; its server calls listen() again with its own


def listen_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` split; a ``Failure`` (exit 2) when it is not one."""
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise Failure(f"--listen wants HOST:PORT, not {value!r}")
    return host.strip("[]"), int(port)


def bound(host: str, port: int, option: str) -> socket.socket:
    """A socket listening on ``host:port``; a ``Failure`` (exit 2) naming ``option`` (the flag
    that picks the address) when the address cannot be taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # Named TCP, not protocol 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    # connections whose socket says IPPROTO_TCP. Without it a response written as headers then
    # body waits for the client's delayed ACK of the first write: ~40 ms on every answer.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(_BACKLOG)
    except OSError as exc:
        sock.close()
        raise Failure(f"cannot listen on {shown(host, port)}: {_why(exc, option)}") from None
    sock.set_inheritable(True)  # --workers processes serve the same socket
    return sock


def shown(host: str, port: int) -> str:
    """``host:port`` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _why(exc: OSError, option: str) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"the port is in use (another server is there): stop it, or choose another {option}"
    if exc.errno == errno.EACCES:
        return f"permission denied (ports below 1024 need privileges): choose another {option}"
    if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
        return f"that host is not an address of this machine: choose another {option}"
    return f"{(exc.strerror or type(exc).__name__).lower()}: check {option}"


def serve(config: uvicorn.Config, sock: socket.socket) -> None:
    """Serve ``config``'s app on the bound ``sock`` until stopped, in ``config.workers``
    processes; a server that could not start ends the command (exit 70: its log says why)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    server = uvicorn.Server(config)
    try:
        if config.workers > 1:
            Multiprocess(config, sockets=[sock]).run()
            return
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        return
    finally:
        sock.close()
    if not server.started:
        raise Failure("the server did not start: its log above says why", ExitCode.BUG)
