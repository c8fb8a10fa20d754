"""Kombu's Redis ack emulation with its writes batched.

Kombu spends one blocking round trip on the consumer's only thread for every delivered message
(its unacked record) and another for every ack; those two were half of that thread's time under
load. Here a batch of delivered messages is recorded in one round trip, and the acks since the
last write ride in the same one.

Kombu writes each in a transaction; here they are a plain pipeline, ordered so that a write cut
short leaves nothing that outlives it: an index entry is written before its record and removed
after it, and kombu's restore drops an index entry whose record is missing. A transaction would
only add ``MULTI`` and ``EXEC``: the window it cannot close (a worker dying between taking
messages and recording them) is kombu's own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from kombu.utils.json import dumps as kombu_dumps

# kombu's stubs do not describe the Redis QoS internals that are overridden here.
_RedisQoS: Any = kombu_redis.QoS
_VirtualQoS: Any = virtual.QoS

# Acks written in one round trip at most; more pending than this are written at once.
ACK_BATCH = 256


class QoS(_RedisQoS):  # type: ignore[misc]  # kombu ships no types for it
    """Kombu's Redis ack emulation, with unacked records and ack removals written in batches.

    A delivered message is recorded in the unacked hash and index before its task starts, as
    in kombu; the messages of one ``BLMPOP`` are recorded together (``batch``), and the removals
    of the messages acked since the last write ride in the same round trip, after the records.
    Acks are written before the consumer's next wait (at most ``brpop_timeout``, 1 s, later),
    at channel close, before unacked messages are restored, and whenever ``ACK_BATCH`` are
    pending. An ack still unwritten when the worker dies only means its message is redelivered
    after the visibility timeout, and its job finds its result already stored and is skipped
    (``worker.jobs.summary.process``).
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
            with (
                self.channel.conn_or_acquire() as client,
                client.pipeline(transaction=False) as pipe,
            ):
                if records:
                    pipe.zadd(self.unacked_index_key, {t: at for t, (at, _) in records.items()})
                    pipe.hset(self.unacked_key, mapping={t: r for t, (_, r) in records.items()})
                if acked:
                    pipe.hdel(self.unacked_key, *acked)
                    pipe.zrem(self.unacked_index_key, *acked)
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
