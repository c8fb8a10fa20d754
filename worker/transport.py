"""Kombu's Redis transport, hardened against poison messages written straight into a queue.

Kombu decodes each popped queue entry as JSON; an entry that is not JSON raises out of the
consumer loop and stops the worker ("Unrecoverable error"), and a restarted worker would meet
the next one the same way. Here such an entry, already popped, is recorded in the dead-letter
list with its reason and the consumer carries on.

It also keeps one Redis client per channel for kombu's short operations. Kombu builds a new
``redis.Redis`` for every one of them (the unacked-index write of each delivered message, each
ack, each event publish), and redis-py's constructor alone took ~14 % of a busy worker's
GIL-holding time (docs/PERFORMANCE.md). A client is a thin, thread-safe handle on the channel's
connection pool, so sharing it changes nothing else.

And it batches the acks' Redis writes (``QoS`` below): kombu spends one blocking round trip on
the consumer's only thread for every delivered message and another for every ack, and those two
were half of that thread's time under load. Everything else is kombu's own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis
import structlog
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from kombu.transport.virtual import Empty
from kombu.utils.json import dumps as kombu_dumps

from producer import keys

log = structlog.get_logger("tersify.transport")

DEAD_LETTER_KEEP = 1000


# kombu's stubs do not describe the Redis channel's internals that are overridden here.
_RedisChannel: Any = kombu_redis.Channel
_RedisTransport: Any = kombu_redis.Transport
_RedisQoS: Any = kombu_redis.QoS
_VirtualQoS: Any = virtual.QoS

# Acks written in one round trip at most; more pending than this are written at once.
ACK_BATCH = 256


class QoS(_RedisQoS):  # type: ignore[misc]  # kombu ships no types for it
    """Kombu's Redis ack emulation, with each ack's index removal deferred and batched.

    A delivered message is recorded in the unacked hash and index before its task starts, as
    in kombu, in one MULTI round trip; the removals of the messages acked since then ride in
    that same transaction. When no message arrives, they are written before the consumer's
    next wait (at most ``brpop_timeout``, 1 s, later), at channel close, before unacked messages
    are restored, and whenever ``ACK_BATCH`` are pending. An ack still unwritten when the worker
    dies only means its message is redelivered after the visibility timeout, and its job finds
    its result already stored and is skipped (``worker.pipeline.process``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._acked: list[str] = []

    def append(self, message: Any, delivery_tag: str) -> None:
        """Record a delivered message as unacked, writing the pending acks with it."""
        delivery = message.delivery_info
        record = kombu_dumps([message._raw, delivery["exchange"], delivery["routing_key"]])
        with self.pipe_or_acquire() as pipe:
            acked = self._queue_acks(pipe)
            pipe.zadd(self.unacked_index_key, {delivery_tag: time.time()})
            pipe.hset(self.unacked_key, delivery_tag, record)
            self._execute(pipe, acked)
        _VirtualQoS.append(self, message, delivery_tag)

    def ack(self, delivery_tag: str) -> None:
        """Acknowledge now in memory; the Redis write follows with the next batch."""
        self._acked.append(delivery_tag)
        _VirtualQoS.ack(self, delivery_tag)
        if len(self._acked) >= ACK_BATCH:
            self.flush_acks()

    def flush_acks(self) -> None:
        """Write every pending ack now (one round trip)."""
        if not self._acked:
            return
        with self.pipe_or_acquire() as pipe:
            self._execute(pipe, self._queue_acks(pipe))

    def restore_unacked(self, client: Any = None) -> None:
        """Kombu's restore of unacked messages at shutdown, after the pending acks are written."""
        self.flush_acks()
        super().restore_unacked(client)

    def _queue_acks(self, pipe: Any) -> list[str]:
        acked, self._acked = self._acked, []
        if acked:
            pipe.zrem(self.unacked_index_key, *acked)
            pipe.hdel(self.unacked_key, *acked)
        return acked

    def _execute(self, pipe: Any, acked: list[str]) -> None:
        try:
            pipe.execute()
        except BaseException:
            self._acked[:0] = acked  # not written: keep them for the next attempt
            raise


class Channel(_RedisChannel):  # type: ignore[misc]  # kombu ships no types for it
    """A Redis channel that dead-letters undecodable queue entries instead of dying on them."""

    QoS = QoS
    _shared_client: Any = None

    @contextmanager
    def conn_or_acquire(self, client: Any = None) -> Iterator[Any]:
        """The given client, else the channel's shared one (kombu would build a new one)."""
        if client:
            yield client
            return
        pool = self.pool  # a new pool after a reconnect or a fork: the client follows it
        shared = self._shared_client
        if shared is None or shared.connection_pool is not pool:
            shared = self._shared_client = self.Client(connection_pool=pool)
        yield shared

    def _brpop_read(self, **options: Any) -> bool:
        try:
            return bool(super()._brpop_read(**options))
        except (ValueError, TypeError) as exc:  # JSONDecodeError is a ValueError
            self._dead_letter(exc)
            return True  # the entry was consumed; poll again

    def _brpop_start(self, timeout: Any = None) -> Any:
        self.qos.flush_acks()  # the consumer is about to wait: nothing stays unwritten meanwhile
        return super()._brpop_start(timeout)

    def close(self) -> None:
        """Write the pending acks (best effort: unwritten ones are only redelivered), close."""
        qos = self._qos
        if qos is not None and not self.closed:
            try:
                qos.flush_acks()
            except (redis.RedisError, OSError) as exc:
                log.warning("acks_not_written", error=type(exc).__name__)
        super().close()

    def _get(self, queue: str) -> Any:
        try:
            return super()._get(queue)
        except (ValueError, TypeError) as exc:
            self._dead_letter(exc)
            raise Empty() from None

    def _dead_letter(self, exc: Exception) -> None:
        reason = f"undecodable queue entry: {type(exc).__name__}: {str(exc)[:200]}"
        log.error("job_rejected", reason=reason)
        record = json.dumps({"reason": reason, "message": None, "at": time.time()})
        try:
            with self.conn_or_acquire() as client, client.pipeline() as pipe:
                pipe.lpush(keys.DEAD_LETTERS, record)
                pipe.ltrim(keys.DEAD_LETTERS, 0, DEAD_LETTER_KEEP - 1)
                pipe.execute()
        except (redis.RedisError, OSError):
            pass  # the reason is in the log; Redis is gone


class Transport(_RedisTransport):  # type: ignore[misc]  # kombu ships no types for it
    """Kombu's Redis transport with the hardened channel."""

    Channel = Channel
