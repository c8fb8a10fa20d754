"""Connection hygiene for tersify's HTTP servers (the API and the gateway): a cap on open
connections and deadlines for reading each request.

uvicorn closes idle keep-alive connections but gives a client all the time it likes to send a
request's headers and body. ``GuardedH11Protocol`` closes a connection whose headers are not
complete ``header_timeout`` seconds after it opened (or after its last response), or whose body
is not complete ``body_timeout`` seconds after its headers, and refuses connections past the
cap: half the process's file-descriptor limit at most (raised to its hard limit first), so
``accept`` never runs out of descriptors and Redis connections, logs and health checks always
find one. At the cap a new connection takes the place of the oldest one still sending (or
idly waiting to send) a request, so a flood of half-open connections holds no slot a real
client needs; only when every connection has a request in hand is a new one refused. Each
server subclasses it with its own limits and its own counter of closes.
"""

from __future__ import annotations

import asyncio
import resource
import sys
from dataclasses import dataclass
from typing import ClassVar

import h11
from prometheus_client import Counter
from uvicorn.protocols.http.h11_impl import H11Protocol

SWITCH_SECONDS = 0.0005
"""How long a thread holds the interpreter before another may take it (Python's default is 5 ms).
A server's event loop waits up to this for it on each wake-up while a thread cuts, hashes or
scans a large request: at 5 ms, a small request needing a few dozen wake-ups waited 100 ms and
more (docs/PERFORMANCE.md, bench/stall.py)."""

# descriptors kept for everything that is not a client connection (Redis, logs, the listener)
_RESERVED_FDS = 32


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """What one server process allows its clients."""

    max_connections: int
    header_timeout: float
    body_timeout: float

    @property
    def backlog(self) -> int:
        """The listen backlog, which is also how many connections one wake-up accepts at once.

        asyncio accepts up to this many before any of them is seen (and refused past the cap),
        so it is kept a fraction of the cap: descriptors stay within the cap and two batches.
        """
        return max(8, min(2048, self.max_connections // 4))

    @classmethod
    def capped(
        cls, max_connections: int, header_timeout: float, body_timeout: float
    ) -> ConnectionLimits:
        """These limits, the connection cap lowered to fit the descriptor limit."""
        return cls(connection_cap(max_connections), header_timeout, body_timeout)


def raise_fd_limit() -> int:
    """Raise this process's soft descriptor limit to its hard one; returns the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65_536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def connection_cap(wanted: int) -> int:
    """``wanted``, lowered to half the descriptors left after the reserve (at least 8)."""
    soft = raise_fd_limit()
    return max(8, min(wanted, (soft - _RESERVED_FDS) // 2))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a connection cap and request-read deadlines; a server's
    subclass sets ``closed``, the counter of the connections it closed, by reason."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits(1000, 10.0, 60.0)
    closed: ClassVar[Counter]
    # the connections with no request in hand (sending one, or idle), oldest first
    _waiting: ClassVar[dict[GuardedH11Protocol, None]] = {}

    _read_timer: asyncio.TimerHandle | None = None
    _reading_body = False

    @classmethod
    def configure(cls, limits: ConnectionLimits) -> ConnectionLimits:
        """Apply ``limits`` to every connection this process accepts from now on, and let the
        event loop take the interpreter back sooner from a thread working on a large request
        (``SWITCH_SECONDS``)."""
        cls.limits = limits
        cls._waiting = {}
        sys.setswitchinterval(SWITCH_SECONDS)
        return limits

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Accept the connection; at the cap in the place of the oldest one with no request in
        hand, else (every one has a request) close it at once."""
        full = len(self.connections) >= self.limits.max_connections
        super().connection_made(transport)
        if full and not self._evict_oldest():
            self.closed.labels("cap").inc()
            transport.abort()
            return
        self._waiting[self] = None
        self._arm(self.limits.header_timeout, body=False)

    def data_received(self, data: bytes) -> None:
        """Read as uvicorn does, then move the deadline to the request's new state."""
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.IDLE:
            self._waiting.setdefault(self)
            if self._read_timer is None or self._reading_body:
                self._arm(self.limits.header_timeout, body=False)
        elif state is h11.SEND_BODY:
            if not self._reading_body:
                self._arm(self.limits.body_timeout, body=True)
        else:
            self._waiting.pop(self, None)  # a request in hand: never evicted
            self._disarm()  # the request is read: the app may take its time (long-polls)

    def on_response_complete(self) -> None:
        """After a response, uvicorn's keep-alive timeout covers the idle connection (which a
        new one may take the place of at the cap)."""
        self._disarm()
        self._waiting[self] = None
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """Drop the deadline with the connection."""
        self._disarm()
        self._waiting.pop(self, None)
        super().connection_lost(exc)

    def _evict_oldest(self) -> bool:
        """Close the oldest connection with no request in hand; False when there is none."""
        while self._waiting:
            oldest = next(iter(self._waiting))
            del self._waiting[oldest]
            if oldest is not self and not oldest.transport.is_closing():
                self.closed.labels("evicted").inc()
                oldest.transport.abort()
                return True
        return False

    def _arm(self, seconds: float, *, body: bool) -> None:
        self._disarm()
        self._reading_body = body
        self._read_timer = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None
        self._reading_body = False

    def _too_slow(self) -> None:
        reason = "body_timeout" if self._reading_body else "header_timeout"
        self._read_timer = None
        if not self.transport.is_closing():
            self.closed.labels(reason).inc()
            self.transport.close()
