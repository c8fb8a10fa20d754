"""Kombu's Redis channel, hardened against poison entries and taking messages in batches.

Kombu trusts each popped queue entry: one that is not JSON, or a JSON envelope with a field
missing, null or of the wrong type, raises out of the consumer loop and stops the worker
("Unrecoverable error"), and every restarted worker meets the next one the same way. Here each
entry is first checked whole (``worker.broker.envelope``: size, JSON, envelope, Celery's body)
and an incomplete one is dead-lettered with its reason; whatever still raises on the way from
the queue to a task is caught at that boundary, dead-lettered, and its delivery forgotten so it
is never redelivered. The consumer carries on in every case.

Under a backlog the channel takes up to ``TAKE_BATCH`` messages in one ``BLMPOP`` (Redis 7)
where kombu pops one per ``BRPOP``, and records them all as unacked in one transaction
(``worker.broker.qos``). It also keeps one Redis client for kombu's short operations: kombu
builds a new ``redis.Redis`` for each of them, and that constructor alone took ~14 % of a busy
worker's GIL-holding time; a client is a thin, thread-safe handle on the channel's pool.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis
import structlog
from kombu.transport import redis as kombu_redis
from kombu.transport.virtual import Empty
from kombu.utils.encoding import bytes_to_str

from tersify.contract import DeadLetterReason
from tersify.errors import RefusedEntryError
from tersify.store.redis_url import PrimaryConnection
from tersify.worker.broker.envelope import check_entry
from tersify.worker.broker.qos import QoS
from tersify.worker.jobs.deadletter import dead_letter

log = structlog.get_logger("tersify.transport")

# kombu's stubs do not describe the Redis channel internals that are overridden here.
_RedisChannel: Any = kombu_redis.Channel

# Messages taken off a queue in one BLMPOP at most (never more than the prefetch allows).
TAKE_BATCH = 32


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


_KombuSentinelChannel: Any = kombu_redis.SentinelChannel


class SentinelChannel(Channel, _KombuSentinelChannel):  # type: ignore[misc]  # untyped kombu
    """The hardened channel on a Sentinel-watched primary: its pools follow fail-overs."""

    connection_class = PrimaryConnection

    from_transport_options = tuple(
        dict.fromkeys(
            (*Channel.from_transport_options, *_KombuSentinelChannel.from_transport_options)
        )
    )
