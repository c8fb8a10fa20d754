"""HTTP/1.1 by hand, for hostile tests and benchmarks: requests no client library would
normalize, connections left half-sent, and a loopback listener that records every connection it
is offered (a place nothing may reach)."""

from __future__ import annotations

import contextlib
import resource
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Self


@dataclass(frozen=True, slots=True)
class RawResponse:
    """A response as it came: its status (0 when none came), headers and body."""

    status: int
    headers: dict[str, str]
    body: bytes


def request_bytes(
    method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> bytes:
    """A request whose target goes on the wire exactly as given."""
    lines = [f"{method} {target} HTTP/1.1", "Host: gateway", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def exchange(port: int, raw: bytes, timeout: float = 30.0) -> RawResponse:
    """Send ``raw`` to the loopback ``port`` and read the answer until the server closes."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(raw)
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            chunks.append(chunk)
    return parse(b"".join(chunks))


def parse(data: bytes) -> RawResponse:
    """A raw HTTP/1.1 response read whole (a chunked body is joined)."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines or not lines[0].startswith("HTTP/1.1 "):
        return RawResponse(0, {}, data)
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = _unchunked(body)
    return RawResponse(status, headers, body)


def half_open(port: int, first: bytes) -> socket.socket | None:
    """A loopback connection that sent ``first`` and nothing more; None when it never connected.
    One the server closed while ``first`` was being sent is kept: the server counts its close."""
    sock = socket.socket()
    sock.settimeout(5)
    try:
        sock.connect(("127.0.0.1", port))
    except OSError:
        sock.close()
        return None
    with contextlib.suppress(OSError):  # closed past the server's cap meanwhile: that is the point
        sock.sendall(first)
    return sock


@contextlib.contextmanager
def half_open_many(
    port: int, count: int, openers: Sequence[bytes]
) -> Iterator[list[socket.socket]]:
    """``count`` connections to the loopback ``port``, each left half-sent with the next of
    ``openers`` in turn: those that connected, all closed when the block ends."""
    socks = [
        s for n in range(count) if (s := half_open(port, openers[n % len(openers)])) is not None
    ]
    try:
        yield socks
    finally:
        for sock in socks:
            sock.close()


def all_closed_by_server(socks: Sequence[socket.socket], timeout: float) -> bool:
    """Whether the server closed every one of ``socks``, each given ``timeout`` seconds."""
    for sock in socks:
        sock.settimeout(timeout)
    return all(closed_by_server(sock) for sock in socks)


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed (or reset) ``sock`` before its timeout passed."""
    try:
        return sock.recv(1024) == b""
    except TimeoutError:
        return False
    except OSError:  # reset: closed too
        return True


def raise_fd_limit(at_least: int) -> None:
    """Raise this process's soft descriptor limit to ``at_least`` (at most 4096 and the hard
    limit) when it is lower: room for a test's own sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < at_least:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))


def _unchunked(body: bytes) -> bytes:
    out: list[bytes] = []
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out.append(rest[:size])
        body = rest[size + 2 :]
    return b"".join(out)


class Trap:
    """A loopback listener that accepts and records every connection: nothing may reach it."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.1)
        self.port: int = self._sock.getsockname()[1]
        self.reached: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="trap", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(1.0)
                try:
                    first = conn.recv(4096)
                except OSError:
                    first = b""
                self.reached.append(first or b"(connected)")

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()
