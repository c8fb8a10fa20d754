"""A thread-safe stack of one-connection httpx clients, checked out per in-flight model call.

Why not one shared ``httpx.Client``: with hundreds of concurrent calls on one client, httpcore's
connection pool does work quadratic in its connection count on every request and release, and the
worker burns CPU doing bookkeeping instead of waiting on the network. A LIFO stack of small
clients, each limited to one connection, keeps every pool operation O(1); LIFO order also reuses
the warmest keep-alive connections first. Clients are created lazily up to ``size``; when all are
checked out a caller waits, bounded by its own timeout, rather than creating more.

A checkout may carry a timeout. It is a total budget: it bounds the wait for a free client and
then every connect, TLS handshake, write and read of the call, each clamped to the time left, so
a server that drips one byte a second cannot stretch a call past its deadline.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

_DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=5.0)
_KEEPALIVE_EXPIRY_SECONDS = 30.0
# httpcore reads 64 KiB at a time, and a read allocates its whole buffer before it waits: every
# call waiting on the model held 64 KiB. A model's answer is a few KiB: 4 KiB reads suffice.
READ_CHUNK_BYTES = 4 * 1024


class _Deadline:
    """The monotonic deadline of the call that holds a client, or None when unbounded."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at: float | None = None

    def clamp(self, timeout: float | None, exc: type[Exception]) -> float | None:
        if self.at is None:
            return timeout
        left = self.at - time.monotonic()
        # A zero socket timeout would mean non-blocking mode, not "expired": raise instead.
        if left <= 0:
            raise exc("deadline exceeded")
        return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        wait = self._deadline.clamp(timeout, httpcore.ReadTimeout)
        return self._inner.read(min(max_bytes, READ_CHUNK_BYTES), wait)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        timeout = self._deadline.clamp(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, timeout), self._deadline
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, deadline: _Deadline) -> None:
        self._inner = httpcore.SyncBackend()
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        timeout = self._deadline.clamp(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        timeout = self._deadline.clamp(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_unix_socket(path, timeout, socket_options)
        return _DeadlineStream(stream, self._deadline)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _DeadlineTransport(httpx.HTTPTransport):
    def __init__(self, ssl_context: ssl.SSLContext, deadline: _Deadline) -> None:
        super().__init__(verify=ssl_context)
        # httpx offers no public way to hand httpcore a network backend, so the pool is rebuilt.
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=1,
            max_keepalive_connections=1,
            keepalive_expiry=_KEEPALIVE_EXPIRY_SECONDS,
            network_backend=_DeadlineBackend(deadline),
        )


class _Slot:
    __slots__ = ("client", "deadline")

    def __init__(self, client: httpx.Client, deadline: _Deadline) -> None:
        self.client = client
        self.deadline = deadline


class ClientPool:
    """A LIFO stack of up to ``size`` one-connection ``httpx.Client``s, one per in-flight call."""

    def __init__(self, size: int, *, timeout: httpx.Timeout = _DEFAULT_TIMEOUT) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        self.size = size
        self._timeout = timeout
        self._cond = threading.Condition()
        self._idle: list[_Slot] = []
        self._created = 0
        self._closed = False
        self._ssl_context: ssl.SSLContext | None = None

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._closed

    @property
    def created(self) -> int:
        """How many clients exist (idle or checked out)."""
        return self._created

    @contextmanager
    def client(self, timeout: float | None = None) -> Iterator[httpx.Client]:
        """Check out a client for one call; ``timeout`` bounds the wait and all of the call's I/O.

        Raises ``httpx.PoolTimeout`` when no client frees up in time, ``RuntimeError`` once closed.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        slot = self._checkout(deadline)
        slot.deadline.at = deadline
        try:
            yield slot.client
        finally:
            slot.deadline.at = None
            self._checkin(slot)

    def close(self) -> None:
        """Close idle clients now and checked-out ones as they come back; refuse new checkouts."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._created -= len(idle)
            self._cond.notify_all()
        for slot in idle:
            slot.client.close()

    def _checkout(self, deadline: float | None) -> _Slot:
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("client pool is closed")
                if self._idle:
                    return self._idle.pop()
                if self._created < self.size:
                    self._created += 1
                    break
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    raise httpx.PoolTimeout("no free HTTP client before the deadline")
                self._cond.wait(wait)
        try:
            return self._new_slot()
        except BaseException:
            with self._cond:
                self._created -= 1
                self._cond.notify()
            raise

    def _checkin(self, slot: _Slot) -> None:
        with self._cond:
            if not self._closed:
                self._idle.append(slot)
                self._cond.notify()
                return
            self._created -= 1
        slot.client.close()

    def _new_slot(self) -> _Slot:
        with self._cond:
            if self._ssl_context is None:
                # One context for every client: loading the CA bundle costs milliseconds each.
                self._ssl_context = httpx.create_ssl_context()
            ssl_context = self._ssl_context
        deadline = _Deadline()
        transport = _DeadlineTransport(ssl_context, deadline)
        client = httpx.Client(transport=transport, timeout=self._timeout, follow_redirects=False)
        return _Slot(client, deadline)
