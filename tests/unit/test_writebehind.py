"""Deferred Redis writes: batched, sent on close, never raising into a job."""

from __future__ import annotations

import time

import redis
import structlog

from tersify.worker.store.writebehind import WriteBehind


def _set(key: str):
    return lambda pipe: pipe.set(key, "1")


def test_queued_writes_go_out_together_in_one_flush(redis_client) -> None:
    writes = WriteBehind(redis_client, interval=60.0)
    for i in range(100):
        writes.submit(_set(f"k{i}"))
    assert redis_client.exists(*(f"k{i}" for i in range(100))) == 0
    assert writes.flush() == 100
    assert redis_client.exists(*(f"k{i}" for i in range(100))) == 100
    assert writes.flush() == 0
    writes.close()


def test_the_background_thread_sends_them_within_the_interval(redis_client) -> None:
    writes = WriteBehind(redis_client, interval=0.01)
    writes.submit(_set("soon"))
    deadline = time.monotonic() + 5
    while not redis_client.exists("soon") and time.monotonic() < deadline:
        time.sleep(0.005)
    assert redis_client.exists("soon")
    writes.close()


def test_close_sends_what_is_left_and_later_writes_go_at_once(redis_client) -> None:
    writes = WriteBehind(redis_client, interval=60.0)
    writes.submit(_set("left"))
    started = time.monotonic()
    writes.close()
    assert time.monotonic() - started < 5  # the batching wait is cut short
    assert redis_client.exists("left")
    writes.submit(_set("late"))
    assert redis_client.exists("late")


def test_an_unreachable_redis_loses_the_batch_with_a_warning_not_an_error() -> None:
    gone = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    writes = WriteBehind(gone, interval=60.0)
    writes.submit(_set("never"))
    with structlog.testing.capture_logs() as logs:
        assert writes.flush() == 0
    assert [e["event"] for e in logs] == ["deferred_writes_lost"]
    writes.close()


def test_the_queue_is_bounded_and_drops_the_oldest(redis_client) -> None:
    writes = WriteBehind(redis_client, interval=60.0, limit=3)
    for i in range(5):
        writes.submit(_set(f"b{i}"))
    assert writes.flush() == 3
    assert [bool(redis_client.exists(f"b{i}")) for i in range(5)] == [
        False,
        False,
        True,
        True,
        True,
    ]
    writes.close()
