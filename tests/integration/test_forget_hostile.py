"""Forget and the lists that hold outputs, attacked: exact matches, nothing written afterwards,
no keyspace scan, byte bounds. Real Redis, workers, the API and a loopback webhook receiver."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from pydantic import SecretStr

from tersify.client import Producer
from tersify.contract import DeadLetterReason
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.jobs.deadletter import dead_letter
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.store.sessionlog import session_files
from tests.helpers import wait_for
from tests.hooks import HookReceiver
from tests.integration.api import SCOPED, ApiServer
from tests.integration.test_api import client

StartWorker = Callable[..., WorkerProcess]
SECRET = "whsec-forget-0123456789abcdef"
OUTPUT = "".join(f"{i:04d} INFO request {i} served in {i % 97} ms\n" for i in range(600))
SIBLINGS = ("team-a/sess-1", "team-a/sess-10", "team-a/sess-11", "team-a/sess-12")


@pytest.fixture
def hooks() -> Iterator[HookReceiver]:
    """A loopback receiver, closed when the test ends."""
    receiver = HookReceiver()
    yield receiver
    receiver.close()


def message(session_id: str, n: int) -> dict[str, Any]:
    """A summary job message of ``session_id``, as a worker would dead-letter it."""
    job = {"job_id": f"job-{n}", "session_id": session_id, "tool_name": "bash"}
    return {"schema_version": 1, "job": job, "payload": f"{n:064x}"}


def sessions_in(client: redis.Redis, key: str) -> list[str]:
    """The session each entry of a capped list names."""
    found = []
    for raw in client.lrange(key, 0, -1):
        record = json.loads(raw)
        found.append(
            (record.get("job") or {}).get("job", {}).get("session_id") or record.get("session_id")
        )
    return sorted(found)


def test_forget_removes_only_the_exact_sessions_list_entries(
    settings: Settings,
    redis_client: redis.Redis,
    start_api: Callable[..., ApiServer],
) -> None:
    for n, session in enumerate(SIBLINGS):
        dead_letter(redis_client, DeadLetterReason.PAYLOAD_MISSING, "expired", message(session, n))
        fallback = {"job_id": f"job-{n}", "session_id": session, "reason": "model_error"}
        redis_client.lpush(keys.RECENT_FALLBACKS, json.dumps(fallback))
    with Producer(settings) as producer:
        producer.forget("e")  # a substring of every record
    assert sessions_in(redis_client, keys.DEAD_LETTERS) == sorted(SIBLINGS)
    with client(start_api(), SCOPED) as http:
        assert http.delete("/v1/sessions/team-a/sess-1").status_code == 200
    rest = sorted(SIBLINGS[1:])
    assert sessions_in(redis_client, keys.DEAD_LETTERS) == rest
    assert sessions_in(redis_client, keys.RECENT_FALLBACKS) == rest


def test_a_forgotten_passthrough_is_never_written_to_the_session_log(
    settings: Settings, start_worker: StartWorker, producer: Producer
) -> None:
    producer.submit(session_id="pt-gone", tool_name="bash", output="a short secret output")
    kept = producer.submit(session_id="pt-kept", tool_name="bash", output="a short output")
    producer.forget("pt-gone")
    start_worker()
    wait_for(lambda: session_files(settings.session_log_dir, "pt-kept"), "the kept one logged")
    wait_for(lambda: not producer_pending(producer), "every waiting passthrough taken")
    assert session_files(settings.session_log_dir, "pt-gone") == []
    assert kept.job_id in session_files(settings.session_log_dir, "pt-kept")[0].read_text()


def producer_pending(producer: Producer) -> int:
    """How many passthrough outputs wait for the session log."""
    with redis.Redis.from_url(producer.settings.redis_url) as plain:
        return int(plain.llen(keys.PASSTHROUGH_LOG))


def test_a_webhook_still_retrying_is_not_posted_after_forget(
    settings: Settings, start_worker: StartWorker, hooks: HookReceiver
) -> None:
    allowed = hooks.url("/hooks/")
    worker = start_worker(
        webhook_allowed_urls=allowed,
        webhook_secret=SECRET,
        webhook_max_attempts="3",
        webhook_retry_base_seconds="1.5",
    )
    update = {"webhook_allowed_urls": allowed, "webhook_secret": SecretStr(SECRET)}
    with Producer(settings.model_copy(update=update)) as producer:
        options = {"callback_url": hooks.url("/hooks/fail")}
        producer.submit(session_id="w-gone", tool_name="bash", output=OUTPUT, options=options)
        wait_for(lambda: hooks.of("fail"), "the first POST")
        producer.forget("w-gone")
    dropped = lambda: "webhook_dropped" in worker.log() or len(hooks.hits) > 1  # noqa: E731
    wait_for(dropped, "the retry dropped or posted", timeout=20)
    assert len(hooks.hits) == 1


@pytest.mark.slow
def test_forget_never_scans_the_keyspace(
    settings: Settings,
    producer: Producer,
    redis_client: redis.Redis,
    start_api: Callable[..., ApiServer],
) -> None:
    for start in range(0, 200_000, 20_000):
        with redis_client.pipeline(transaction=False) as pipe:
            for n in range(start, start + 20_000):
                pipe.set(f"tersify:job:filler-{n}", "x")
            pipe.execute()
    for n in range(3):
        producer.submit(session_id=f"team-a/s{n}", tool_name="bash", output=OUTPUT)
    redis_client.config_resetstat()
    server = start_api()

    def forget(n: int) -> None:
        with client(server, SCOPED) as http:
            assert http.delete(f"/v1/sessions/team-a/s{n % 3}").status_code == 200

    threads = [threading.Thread(target=forget, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    stats = redis_client.info("commandstats")
    assert "cmdstat_scan" not in stats
    assert stats["cmdstat_del"]["calls"] < 200  # the sessions' own keys, not the keyspace


def test_waiting_passthrough_outputs_are_bounded_in_bytes_and_expire(
    settings: Settings, redis_client: redis.Redis
) -> None:
    bound = 32 * 1024 * 1024
    update = {"session_log_pending_max_bytes": bound}
    big = "".join(f"{i:08d} a line of a large listing\n" for i in range(8 * 1024 * 1024 // 35))
    with Producer(settings.model_copy(update=update)) as producer:
        for n in range(10):
            options = {"summarize": False}
            producer.submit(session_id=f"big-{n}", tool_name="bash", output=big, options=options)
    held = list(redis_client.scan_iter("tersify:sessionlog:*"))
    used = sum(redis_client.memory_usage(key) or 0 for key in held)
    assert 0 < used <= bound * 1.1
    assert all(redis_client.ttl(key) > 0 for key in held)
