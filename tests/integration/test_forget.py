"""Forgetting a session leaves nothing of it in Redis (checked with SCAN) nor in its log files."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import redis

from tersify.client import Producer
from tersify.contract import Queue
from tersify.settings import Settings
from tersify.store import keys
from tersify.text.spill import SpillStore
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.store.sessionlog import session_files
from tests.helpers import tersify, wait_for
from tests.integration.api import SCOPED, ApiServer
from tests.integration.test_api import client
from tests.integration.test_compaction_jobs import openai_history

StartWorker = Callable[..., WorkerProcess]
SHARED = "".join(f"shared line {i}: the same output in two sessions\n" for i in range(200))


def values(client: redis.Redis, key: str) -> list[Any]:
    """Everything a key holds, whatever its type."""
    kind = client.type(key)
    readers = {
        "string": lambda: [client.get(key)],
        "list": lambda: client.lrange(key, 0, -1),
        "hash": lambda: [*client.hkeys(key), *client.hvals(key)],
        "set": lambda: list(client.smembers(key)),
        "zset": lambda: client.zrange(key, 0, -1),
    }
    return list(readers.get(kind, list)())


def producer_redis(producer: Producer) -> redis.Redis:
    """A text client on the producer's Redis."""
    return redis.Redis.from_url(producer.settings.redis_url, decode_responses=True)


def traces(client: redis.Redis, needles: set[str], only: set[str] | None = None) -> list[str]:
    """Every key (found with SCAN; or just ``only``) whose name or content names a needle."""
    found = []
    for key in only or client.scan_iter(count=1000):
        texts = [key, *(str(v) for v in values(client, key))]
        if any(needle in text for needle in needles for text in texts):
            found.append(key)
    return found


def use_session(producer: Producer, session_id: str, *, extra: str = "") -> set[str]:
    """Submit outputs (interactive, batch, shared with another session), a compaction and held
    input for ``session_id``; wait for every result; the job ids."""
    outputs = [f"{session_id} output {n}\n" * 120 + extra for n in range(3)] + [SHARED]
    handles = [
        producer.submit(session_id=session_id, tool_name="bash", output=output, queue=queue)
        for output, queue in zip(outputs, [*[Queue.INTERACTIVE] * 3, Queue.BATCH], strict=True)
    ]
    compaction = producer.compact(session_id=session_id, messages=openai_history(), protect_last=2)
    for handle in handles:
        handle.wait(30)
    compaction.wait(30)
    producer.gate.hold_input(session_id, "a message typed while a job ran")
    jobs = {handle.job_id for handle in handles} | {compaction.job_id}
    client = producer_redis(producer)
    SpillStore(client, ttl_seconds=600).save(session_id, "a long output the inline cut spilled")
    # A worker acknowledges a message just after storing its result: wait for the acks.
    unacked = f"{session_id} messages acknowledged"
    wait_for(lambda: not traces(client, jobs, {"unacked"}), unacked)
    client.close()
    return jobs


def test_forget_leaves_nothing_of_the_session_and_keeps_the_others(
    start_worker: StartWorker, producer: Producer, redis_client: redis.Redis, settings: Settings
) -> None:
    start_worker()
    doomed = use_session(producer, "doomed")
    kept = use_session(producer, "kept")
    assert traces(redis_client, {"doomed", *doomed})
    assert session_files(settings.session_log_dir, "doomed")

    done = tersify(
        settings, "forget", "doomed", "--json", session_log_dir=str(settings.session_log_dir)
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["jobs"] == len(doomed) and report["redis_keys"] > len(doomed)
    assert report["log_files"] == 1

    # the tombstone names the session and holds when it was forgotten, nothing else
    assert traces(redis_client, {"doomed", *doomed}) == [keys.forgotten("doomed")]
    assert session_files(settings.session_log_dir, "doomed") == []
    assert session_files(settings.session_log_dir, "kept")
    assert all(traces(redis_client, {job_id}) for job_id in kept)  # the other session's stay
    assert producer.submit(session_id="kept2", tool_name="bash", output=SHARED).wait(30).text


def test_producer_forget_and_delete_over_http_forget_a_session(
    start_worker: StartWorker,
    producer: Producer,
    redis_client: redis.Redis,
    start_api: Callable[..., ApiServer],
) -> None:
    start_worker()
    first = use_session(producer, "first")
    report = producer.forget("first")
    assert report.jobs == len(first)
    assert traces(redis_client, {"first", *first}) == [keys.forgotten("first")]

    second = use_session(producer, "team-a/second")
    server = start_api()
    with client(server) as http:
        response = http.delete("/v1/sessions/team-a/second")
    assert response.status_code == 200, response.text
    assert response.json()["jobs"] == len(second)
    assert traces(redis_client, {"team-a/second", *second}) == [keys.forgotten("team-a/second")]


def test_a_scoped_token_cannot_forget_another_teams_session(
    start_api: Callable[..., ApiServer],
) -> None:
    with client(start_api(), SCOPED) as http:
        response = http.delete("/v1/sessions/team-b/other")
    assert response.status_code == 403
