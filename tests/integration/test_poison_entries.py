"""No queue entry, however malformed, stops a worker: each one is dead-lettered with its reason.

Hypothesis writes entries straight into every list a worker reads (both queues and their kombu
priority lists) against one real worker process; after each batch the worker must be alive, each
entry must be in the dead-letter list exactly once, and nothing may be left in a queue or in
kombu's unacked records to be redelivered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
import redis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tersify.client import Producer
from tersify.contract import DeadLetterReason, Method
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tests.entries import bad_entries
from tests.helpers import wait_for

ENTRY_LIMIT = 64 * 1024  # the worker's TERSIFY_MAX_QUEUE_ENTRY_BYTES (its smallest setting)
BATCHES = 10
SEP = "\x06\x16"  # kombu's separator between a queue and its priority step
LISTS = [
    name
    for queue in ("interactive", "batch")
    for name in (queue, *(f"{queue}{SEP}{step}" for step in (3, 6, 9)))
]
REASONS = {reason.value for reason in DeadLetterReason}


@pytest.fixture
def worker(start_worker: Callable[..., WorkerProcess]) -> Iterator[WorkerProcess]:
    """One worker process for every generated batch, with the smallest entry ceiling."""
    yield start_worker(max_queue_entry_bytes=str(ENTRY_LIMIT))


@pytest.mark.filterwarnings("ignore:Generating overly large repr")
def test_any_malformed_entry_in_any_queue_is_dead_lettered_and_the_worker_lives_on(
    worker: WorkerProcess, producer: Producer, redis_client: redis.Redis
) -> None:
    pushed: list[int] = []

    @settings(
        max_examples=BATCHES,
        deadline=None,
        database=None,
        phases=[Phase.generate],  # shrinking against a live worker would take minutes
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )
    @given(batch=st.lists(st.tuples(st.sampled_from(LISTS), bad_entries(ENTRY_LIMIT)), min_size=55))
    def push_and_check(batch: list[tuple[str, bytes]]) -> None:
        redis_client.delete(keys.DEAD_LETTERS)
        with redis_client.pipeline() as pipe:
            for name, entry in batch:
                pipe.lpush(name, entry)
            pipe.execute()
        wait_for(
            lambda: redis_client.llen(keys.DEAD_LETTERS) >= len(batch),
            f"fewer than {len(batch)} dead letters",
        )
        wait_for(lambda: redis_client.hlen("unacked") == 0, "entries left unacked")
        assert worker.alive(), worker.log()[-3000:]
        records = [json.loads(r) for r in redis_client.lrange(keys.DEAD_LETTERS, 0, -1)]
        assert len(records) == len(batch)
        assert all(r["reason"] in REASONS and r["detail"] for r in records)
        assert all(redis_client.llen(name) == 0 for name in LISTS)
        pushed.append(len(batch))

    push_and_check()

    assert sum(pushed) >= 500
    handle = producer.submit(session_id="after-poison", tool_name="bash", output="y" * 5000)
    assert handle.wait(30).method is Method.EXTRACTIVE
    assert worker.alive()
    assert redis_client.llen(keys.DEAD_LETTERS) == pushed[-1]  # the valid job was not refused


def test_the_largest_job_the_contract_allows_fits_under_the_default_entry_ceiling(
    start_worker: Callable[..., WorkerProcess], producer: Producer, redis_client: redis.Redis
) -> None:
    start_worker()
    widest = "\U0001f600"  # escaped as a surrogate pair: 12 bytes of JSON for one character
    handle = producer.submit(
        session_id="widest",
        tool_name="bash",
        command=widest * 100_000,
        query=widest * 10_000,
        output="z" * 5000,
    )
    assert handle.wait(30).method is Method.EXTRACTIVE
    assert redis_client.llen(keys.DEAD_LETTERS) == 0
