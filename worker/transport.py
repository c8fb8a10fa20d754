"""Kombu's Redis transport, hardened against poison entries written straight into a queue.

Kombu trusts each popped queue entry: one that is not JSON, or a JSON envelope with a field
missing, null or of the wrong type, raises out of the consumer loop and stops the worker
("Unrecoverable error"), and every restarted worker meets the next one the same way. Here each
entry is first checked whole (``worker.envelope``: size, JSON, envelope, Celery's body) and an
incomplete one is dead-lettered with its reason; whatever still raises on the way from the queue
to a task is caught at that boundary, dead-lettered, and its delivery forgotten so it is never
redelivered. The consumer carries on in every case.

It also keeps one Redis client per channel for kombu's short operations. Kombu builds a new
``redis.Redis`` for every one of them (the unacked-index write of each delivered message, each
ack, each event publish), and redis-py's constructor alone took ~14 % of a busy worker's
GIL-holding time (py-spy, under load). A client is a thin, thread-safe handle on the channel's
connection pool, so sharing it changes nothing else.

And it batches the acks' Redis writes (``QoS`` below): kombu spends one blocking round trip on
the consumer's only thread for every delivered message and another for every ack, and those two
were half of that thread's time under load. Under a backlog it takes up to ``TAKE_BATCH``
messages in one ``BLMPOP`` (Redis 7) where kombu pops one per ``BRPOP``, and records them all as
unacked in one transaction: two round trips per batch instead of two per message. Everything
else is kombu's own.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import redis
import structlog
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from kombu.transport.virtual import Empty
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import dumps as kombu_dumps

from producer.contract import DeadLetterReason
from producer.errors import RefusedEntryError
from worker.deadletter import dead_letter
from worker.envelope import check_entry

log = structlog.get_logger("tersify.transport")


# kombu's stubs do not describe the Redis channel's internals that are overridden here.
_RedisChannel: Any = kombu_redis.Channel
_RedisTransport: Any = kombu_redis.Transport
_RedisQoS: Any = kombu_redis.QoS
_VirtualQoS: Any = virtual.QoS

# Acks written in one round trip at most; more pending than this are written at once.
ACK_BATCH = 256
# Messages taken off a queue in one BLMPOP at most (never more than the prefetch allows).
TAKE_BATCH = 32


class QoS(_RedisQoS):  # type: ignore[misc]  # kombu ships no types for it
    """Kombu's Redis ack emulation, with unacked records and ack removals written in batches.

    A delivered message is recorded in the unacked hash and index before its task starts, as
    in kombu; the messages of one ``BLMPOP`` are recorded together (``batch``), and the removals
    of the messages acked since the last write ride in the same transaction, after the records.
    Acks are written before the consumer's next wait (at most ``brpop_timeout``, 1 s, later),
    at channel close, before unacked messages are restored, and whenever ``ACK_BATCH`` are
    pending. An ack still unwritten when the worker dies only means its message is redelivered
    after the visibility timeout, and its job finds its result already stored and is skipped
    (``worker.pipeline.process``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._acked: list[str] = []
        self._records: dict[str, tuple[float, str]] = {}  # delivered, not yet written
        self._pending_lock = threading.Lock()  # acks come from pool threads
        self._batching = False

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Write the unacked records of the messages delivered in the block once, at its end."""
        self._batching = True
        try:
            yield
        finally:
            self._batching = False
            self.flush_acks()

    def append(self, message: Any, delivery_tag: str) -> None:
        """Record a delivered message as unacked (now, or at the end of the current batch)."""
        delivery = message.delivery_info
        record = kombu_dumps([message._raw, delivery["exchange"], delivery["routing_key"]])
        with self._pending_lock:
            self._records[delivery_tag] = (time.time(), record)
        if not self._batching:
            self.flush_acks()
        _VirtualQoS.append(self, message, delivery_tag)

    def ack(self, delivery_tag: str) -> None:
        """Acknowledge now in memory; the Redis write follows with the next batch."""
        with self._pending_lock:
            self._acked.append(delivery_tag)
            full = len(self._acked) >= ACK_BATCH
        _VirtualQoS.ack(self, delivery_tag)
        if full:
            self.flush_acks()

    def reject(self, delivery_tag: str, requeue: bool = False) -> None:
        """Requeue (after writing what is pending), or drop like an ack, in the same batch.

        Kombu's own reject removes the unacked record at once, before a record still pending in
        the current batch is written: the record would then outlive its message, which would be
        redelivered after the visibility timeout (Celery rejects unknown tasks this way).
        """
        if requeue:
            self.flush_acks()
            super().reject(delivery_tag, requeue=True)
        else:
            self.ack(delivery_tag)

    def flush_acks(self) -> None:
        """Write every pending unacked record, then every pending ack (one round trip)."""
        with self._pending_lock:
            records, self._records = self._records, {}
            acked, self._acked = self._acked, []
        if not records and not acked:
            return
        try:
            with self.pipe_or_acquire() as pipe:
                if records:
                    pipe.zadd(self.unacked_index_key, {t: at for t, (at, _) in records.items()})
                    pipe.hset(self.unacked_key, mapping={t: r for t, (_, r) in records.items()})
                if acked:
                    pipe.zrem(self.unacked_index_key, *acked)
                    pipe.hdel(self.unacked_key, *acked)
                pipe.execute()
        except BaseException:
            with self._pending_lock:  # not written: keep them for the next attempt
                self._records = records | self._records
                self._acked[:0] = acked
            raise

    def restore_unacked(self, client: Any = None) -> None:
        """Kombu's restore of unacked messages at shutdown, after the pending acks are written."""
        self.flush_acks()
        super().restore_unacked(client)


class Channel(_RedisChannel):  # type: ignore[misc]  # kombu ships no types for it
    """A Redis channel that dead-letters incomplete queue entries instead of dying on them."""

    QoS = QoS
    from_transport_options = (*_RedisChannel.from_transport_options, "max_entry_bytes")
    max_entry_bytes = 4 * 1024 * 1024  # set from TERSIFY_MAX_QUEUE_ENTRY_BYTES by the worker app
    _shared_client: Any = None
    _sent = "BRPOP"  # the blocking pop in flight
    _take = TAKE_BATCH  # 1 once Redis refused BLMPOP

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

    def _brpop_start(self, timeout: Any = None) -> Any:
        self.qos.flush_acks()  # the consumer is about to wait: nothing stays unwritten meanwhile
        room = self.qos.can_consume_max_estimate()  # None: no prefetch limit
        count = self._take if room is None else min(room, self._take)
        if count <= 1 or self.global_keyprefix:
            self._sent = "BRPOP"
            return super()._brpop_start(timeout)
        queues = self._queue_cycle.consume(len(self.active_queues))
        if not queues:
            return None
        # kombu's BRPOP keys in kombu's order (priority steps per queue), in one BLMPOP
        names = [self._q_for_pri(q, pri) for pri in self.priority_steps for q in queues]
        wait = self.brpop_timeout if timeout is None else timeout
        self._in_poll = self.client.connection
        self._sent = "BLMPOP"
        self.client.connection.send_command(
            "BLMPOP", wait or 0, len(names), *names, "RIGHT", "COUNT", count
        )
        return None

    def _brpop_read(self, **options: Any) -> bool:
        """Deliver what the blocking pop in flight took (one BRPOP entry, or a BLMPOP batch)."""
        connection = self.client.connection
        key, items = "", []
        try:
            try:
                reply = self.client.parse_response(connection, self._sent, **options)
            except redis.ResponseError as exc:
                if self._sent != "BLMPOP":
                    raise
                log.warning("blmpop_unavailable", error=str(exc)[:200])
                self._take = 1  # before Redis 7.0: one message per BRPOP
                raise Empty() from None
            except self.connection_errors:
                connection.disconnect()  # the next poll reconnects
                raise
            if not reply:
                raise Empty()
            key = bytes_to_str(reply[0])
            items = list(reply[1]) if self._sent == "BLMPOP" else [reply[1]]
            queue = key.rsplit(self.sep, 1)[0]
            self._queue_cycle.rotate(queue)
            with self.qos.batch():
                while items:
                    self._deliver_entry(items[0], queue)
                    items.pop(0)
            return True
        finally:
            self._in_poll = None
            if items:  # delivery failed part-way: the rest go back, nothing is lost
                self._put_back(key, items)

    def _deliver_entry(self, item: bytes, queue: str) -> None:
        """Hand one raw entry to the consumer, or dead-letter it; only Redis errors escape."""
        try:
            envelope = check_entry(item, self.max_entry_bytes)
        except RefusedEntryError as exc:
            self._dead_letter(exc.reason, exc.detail, item, queue)
            return
        try:
            self.connection._deliver(envelope, queue)
        except (redis.RedisError, OSError, *self.connection_errors):
            raise  # the broker's fault, not the entry's: it goes back to the queue
        except Exception as exc:
            log.exception("delivery_failed", queue=queue)
            detail = f"{type(exc).__name__}: {str(exc)[:200]}"
            self._dead_letter(DeadLetterReason.DELIVERY_FAILED, detail, item, queue)
            tag = envelope["properties"]["delivery_tag"]
            if tag in self.qos._delivered:  # recorded as unacked: never redeliver it
                self.qos.ack(tag)

    def _put_back(self, key: str, items: list[bytes]) -> None:
        """Return taken, undelivered messages to the consuming end of their list, in order."""
        try:
            with self.conn_or_acquire() as client:
                client.rpush(key, *reversed(items))
        except (redis.RedisError, OSError) as exc:
            log.error("messages_not_returned", count=len(items), error=type(exc).__name__)

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
        """Kombu's non-blocking take (``basic_get``), with the same check as the consumer's."""
        with self.conn_or_acquire() as client:
            for priority in self.priority_steps:
                name = self._q_for_pri(queue, priority)
                item = client.rpop(name)
                if not item:
                    continue
                try:
                    return check_entry(item, self.max_entry_bytes)
                except RefusedEntryError as exc:
                    self._dead_letter(exc.reason, exc.detail, item, queue)
        raise Empty()

    def _dead_letter(self, reason: DeadLetterReason, detail: str, item: bytes, queue: str) -> None:
        with self.conn_or_acquire() as client:
            dead_letter(client, reason, detail, item, queue=queue)


class Transport(_RedisTransport):  # type: ignore[misc]  # kombu ships no types for it
    """Kombu's Redis transport with the hardened channel and a wake-up for its event loop.

    The consumer's event loop sleeps in ``epoll`` until a socket or a timer fires. Work handed
    to it from other threads (Celery's late acks, queued by ``worker.consumer``) must not wait
    for that: ``wake_consumer`` writes one byte to a pipe the loop watches, at most one pending
    at a time. The acks run at the start of the loop's next tick, before it decides to take
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
