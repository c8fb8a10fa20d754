"""The socket a serving command listens on: its connections answer without Nagle's delay."""

from __future__ import annotations

import asyncio
import socket

import pytest

from tersify.worker.cli.failures import Failure
from tersify.worker.cli.listen import bound


async def _nodelay_of_an_accepted_connection(sock: socket.socket) -> int:
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    class Record(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            conn = transport.get_extra_info("socket")
            accepted.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    server = await asyncio.get_running_loop().create_server(Record, sock=sock)
    async with server:
        port = sock.getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            return await asyncio.wait_for(accepted, 10)
        finally:
            writer.close()


def test_connections_on_the_bound_socket_have_nagles_algorithm_off() -> None:
    sock = bound("127.0.0.1", 0, "--port")
    assert asyncio.run(_nodelay_of_an_accepted_connection(sock)) != 0


def test_an_address_in_use_is_one_failure_naming_the_option() -> None:
    first = bound("127.0.0.1", 0, "--port")
    try:
        with pytest.raises(Failure, match=r"the port is in use.*--listen"):
            bound("127.0.0.1", first.getsockname()[1], "--listen")
    finally:
        first.close()
