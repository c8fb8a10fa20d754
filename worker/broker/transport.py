"""Kombu's Redis transport with tersify's channel and a wake-up for the consumer's event loop.

The channel (``worker.broker.channel``) checks every queue entry and takes messages in batches;
its QoS (``worker.broker.qos``) batches the unacked records and acks. Everything else is kombu's.
"""

from __future__ import annotations

import os
from contextlib import suppress
from typing import Any

from kombu.transport import redis as kombu_redis

from tersify.worker.broker.channel import Channel, SentinelChannel

# kombu's stubs do not describe the Redis transport internals that are overridden here.
_RedisTransport: Any = kombu_redis.Transport


class Transport(_RedisTransport):  # type: ignore[misc]  # kombu ships no types for it
    """Kombu's Redis transport with the hardened channel and a wake-up for its event loop.

    The consumer's event loop sleeps in ``epoll`` until a socket or a timer fires. Work handed
    to it from other threads (Celery's late acks, queued by ``worker.broker.consumer``) must
    not wait for that: ``wake_consumer`` writes one byte to a pipe the loop watches, at most one
    pending at a time. The acks run at the start of the loop's next tick, before it decides to take
    more messages, so the room they free is used in that same tick.
    """

    Channel = Channel
    _wakeup: tuple[int, int] | None = None  # (read end, write end), once on an event loop
    _loop: Any = None
    _wake_pending = False

    def register_with_event_loop(self, connection: Any, loop: Any) -> None:
        """Kombu's registration, plus the wake-up pipe (again after every reconnect)."""
        super().register_with_event_loop(connection, loop)
        self._close_wakeup()
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        os.set_blocking(write_end, False)
        self._wakeup, self._loop, self._wake_pending = (read_end, write_end), loop, False
        loop.add_reader(read_end, self._drain_wakeup, read_end)

    def wake_consumer(self) -> None:
        """Make the event loop run its next tick now (safe from any thread; cheap)."""
        wakeup = self._wakeup
        if wakeup is None or self._wake_pending:
            return  # not on an event loop (drain_events polls anyway), or a wake-up is queued
        self._wake_pending = True
        with suppress(BlockingIOError, OSError):  # a full pipe already holds a wake-up
            os.write(wakeup[1], b"\0")

    def _drain_wakeup(self, read_end: int) -> None:
        with suppress(BlockingIOError, OSError):
            while os.read(read_end, 4096):
                pass
        # Cleared after the read: a waker that skipped its write meanwhile queued its work
        # before it looked, and the loop's next tick, which comes next, runs that work.
        self._wake_pending = False

    def _close_wakeup(self) -> None:
        wakeup, loop = self._wakeup, self._loop
        self._wakeup = self._loop = None
        if wakeup is None:
            return
        with suppress(Exception):  # the old loop may be gone already
            loop.remove_reader(wakeup[0])
        for fd in wakeup:
            with suppress(OSError):
                os.close(fd)


class SentinelTransport(Transport):
    """The same transport on a Redis Sentinel primary (``TERSIFY_REDIS_URL=sentinel://…``)."""

    Channel = SentinelChannel
    default_port = kombu_redis.SentinelTransport.default_port
