"""The kombu transport against a real Redis: batched takes, unacked records, put-backs, wake-ups."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from kombu import Connection, Message
from kombu import Queue as KombuQueue
from kombu.asynchronous import Hub

from tersify.store import keys
from tersify.worker.broker.channel import TAKE_BATCH
from tersify.worker.processes.redis_server import LocalRedis

QUEUE = "transport-test"
UNACKED = "unacked"  # kombu's default hash of delivered, unacknowledged messages

Received = list[tuple[Any, Message]]


@pytest.fixture
def connection(redis_server: LocalRedis, redis_client: redis.Redis) -> Iterator[Connection]:
    """A kombu connection through ``worker.broker.transport`` on the session's (emptied) Redis."""
    with Connection(
        redis_server.url, transport="tersify.worker.broker.transport:Transport"
    ) as conn:
        yield conn


def publish(conn: Connection, items: list[dict[str, int]]) -> None:
    """Publish each item to the test queue as a Celery message's argument, in order."""
    queue = KombuQueue(QUEUE, routing_key=QUEUE)
    producer = conn.Producer(serializer="json")
    for n, item in enumerate(items):
        headers = {"task": "test.task", "id": f"job-{n}"}
        body = [[item], {}, {}]  # Celery's protocol 2: args, kwargs, embed
        producer.publish(body, routing_key=QUEUE, declare=[queue], headers=headers)


def arg(body: Any) -> Any:
    """The one argument a published message carries."""
    return body[0][0]


def consume(
    conn: Connection,
    expected: int,
    *,
    prefetch: int = 100,
    on_message: Callable[[Any, Message], None] | None = None,
) -> Received:
    """Drain events until ``expected`` messages arrived (bounded: a few poll rounds)."""
    received: Received = []

    def callback(body: Any, message: Message) -> None:
        if on_message is not None:
            on_message(body, message)
        received.append((body, message))

    queue = KombuQueue(QUEUE, routing_key=QUEUE)
    with conn.Consumer(queue, callbacks=[callback], accept=["json"]) as consumer:
        consumer.qos(prefetch_count=prefetch)
        for _ in range(expected + 5):
            if len(received) >= expected:
                break
            try:
                conn.drain_events(timeout=1)
            except TimeoutError:
                continue
    return received


def test_a_backlog_is_taken_in_batches_in_order_and_recorded_as_unacked_together(
    connection: Connection, redis_client: redis.Redis
) -> None:
    publish(connection, [{"n": n} for n in range(10)])
    rounds: list[int] = []

    def count_rounds(body: Any, message: Message) -> None:
        rounds.append(redis_client.llen(QUEUE))  # what is left in Redis at each delivery

    received = consume(connection, 10, on_message=count_rounds)

    assert [arg(body)["n"] for body, _ in received] == list(range(10))  # FIFO, as kombu
    assert rounds == [0] * 10  # one BLMPOP took all ten before the first was delivered
    assert redis_client.hlen(UNACKED) == 10
    for _, message in received:
        message.ack()
    connection.default_channel.qos.flush_acks()
    assert redis_client.hlen(UNACKED) == 0
    assert redis_client.zcard("unacked_index") == 0


def test_no_more_than_the_prefetch_allows_is_taken_at_once(
    connection: Connection, redis_client: redis.Redis
) -> None:
    publish(connection, [{"n": n} for n in range(TAKE_BATCH + 8)])
    left: list[int] = []
    consume(connection, 3, prefetch=3, on_message=lambda *_: left.append(redis_client.llen(QUEUE)))
    assert left[:3] == [TAKE_BATCH + 5] * 3


def test_an_undecodable_entry_in_a_batch_is_dead_lettered_and_the_rest_delivered(
    connection: Connection, redis_client: redis.Redis
) -> None:
    publish(connection, [{"n": 0}])
    redis_client.lpush(QUEUE, "not json {")  # the list is consumed from the right
    publish(connection, [{"n": 1}])

    received = consume(connection, 2)

    assert [arg(body)["n"] for body, _ in received] == [0, 1]
    (record,) = redis_client.lrange(keys.DEAD_LETTERS, 0, -1)
    assert json.loads(record)["reason"] == "not_json"


def test_an_entry_whose_delivery_raises_is_dead_lettered_forgotten_and_the_rest_delivered(
    connection: Connection, redis_client: redis.Redis
) -> None:
    publish(connection, [{"n": n} for n in range(4)])

    def break_on_second(body: Any, message: Message) -> None:
        if arg(body)["n"] == 1:
            raise KeyError("a consumer bug")

    received = consume(connection, 3, on_message=break_on_second)

    assert [arg(body)["n"] for body, _ in received] == [0, 2, 3]
    (record,) = redis_client.lrange(keys.DEAD_LETTERS, 0, -1)
    assert json.loads(record)["reason"] == "delivery_failed"
    assert "a consumer bug" in json.loads(record)["detail"]
    for _, message in received:
        message.ack()
    connection.default_channel.qos.flush_acks()
    assert redis_client.hlen(UNACKED) == 0  # the broken one is not left to be redelivered


def test_messages_left_when_redis_fails_mid_delivery_go_back_to_the_queue_in_order(
    connection: Connection, redis_client: redis.Redis
) -> None:
    publish(connection, [{"n": n} for n in range(6)])

    def fail_on_third(body: Any, message: Message) -> None:
        if arg(body)["n"] == 2:
            raise redis.ConnectionError("Redis went away")

    with pytest.raises(redis.ConnectionError, match="went away"):
        consume(connection, 6, on_message=fail_on_third)

    assert redis_client.llen(QUEUE) == 4  # the failed one and the three after it: none lost
    again = consume(connection, 4)
    assert [arg(body)["n"] for body, _ in again] == [2, 3, 4, 5]


@pytest.fixture
def on_event_loop(connection: Connection) -> Iterator[tuple[Any, Hub]]:
    """The connection's transport registered with a real kombu event loop (a ``Hub``)."""
    hub = Hub()
    connection.default_channel  # noqa: B018 - kombu registers the channels it has
    transport = connection.transport
    transport.register_with_event_loop(connection.connection, hub)
    try:
        yield transport, hub
    finally:
        transport._close_wakeup()
        hub.close()


def readable(hub: Hub, fd: int) -> bool:
    """Whether the loop's poller reports ``fd`` readable right now (no waiting)."""
    return any(ready == fd for ready, _ in hub.poller.poll(0) or ())


def test_a_wake_up_from_another_thread_makes_the_event_loop_poll_return(
    on_event_loop: tuple[Any, Hub],
) -> None:
    transport, hub = on_event_loop
    read_end = transport._wakeup[0]
    assert read_end in hub.readers and not readable(hub, read_end)

    thread = threading.Thread(target=transport.wake_consumer)
    thread.start()
    thread.join(5)

    assert readable(hub, read_end)


def test_wake_ups_coalesce_until_the_loop_drains_them_and_none_is_lost_after(
    on_event_loop: tuple[Any, Hub],
) -> None:
    transport, hub = on_event_loop
    read_end = transport._wakeup[0]
    transport.wake_consumer()
    transport.wake_consumer()  # one is pending: nothing more is written
    assert os.read(read_end, 100) == b"\0"
    transport._drain_wakeup(read_end)  # what the loop runs when the pipe is readable
    assert not readable(hub, read_end)

    transport.wake_consumer()  # after a drain, the next wake-up writes again

    assert readable(hub, read_end)


def test_a_message_rejected_in_its_batch_leaves_no_unacked_record_to_be_redelivered(
    connection: Connection, redis_client: redis.Redis
) -> None:
    publish(connection, [{"n": n} for n in range(3)])

    received = consume(connection, 3, on_message=lambda _, message: message.reject())

    assert len(received) == 3
    connection.default_channel.qos.flush_acks()
    assert redis_client.hlen(UNACKED) == 0
    assert redis_client.llen(QUEUE) == 0


def test_a_message_rejected_with_requeue_goes_back_to_its_queue(
    connection: Connection, redis_client: redis.Redis
) -> None:
    publish(connection, [{"n": 7}])

    consume(connection, 1, on_message=lambda _, message: message.reject(requeue=True))

    assert redis_client.hlen(UNACKED) == 0
    assert [arg(body)["n"] for body, _ in consume(connection, 1)] == [7]
