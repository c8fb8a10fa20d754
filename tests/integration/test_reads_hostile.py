"""Large reads, replays and dead-letter records, attacked: real API, workers, Redis, CLI."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

import pytest
import redis
from pydantic import SecretStr

from tersify.client import Producer
from tersify.contract import Queue
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import tersify, wait_for
from tests.integration.api import ApiServer
from tests.integration.test_api import client

StartWorker = Callable[..., WorkerProcess]
OUTPUT = "".join(f"{i:04d} INFO request {i} served in {i % 97} ms\n" for i in range(600))


def output_ref(client_: redis.Redis, job_id: str) -> str:
    """The ``output_ref`` a submitted job's record names."""
    return str(json.loads(client_.get(keys.job_meta(job_id)))["job"]["output_ref"])


def listed(settings: Settings) -> list[str]:
    """The lines of ``tersify deadletters list --json``."""
    return tersify(settings, "deadletters", "list", "--json").stdout.splitlines()


def test_large_grep_reads_never_hold_another_clients_request(
    settings: Settings,
    producer: Producer,
    redis_client: redis.Redis,
    start_api: Callable[..., ApiServer],
) -> None:
    line = "2026-01-01T00:00:00 INFO worker-{:07d} handled a request in 12 ms\n"
    big = "".join(line.format(i) for i in range(15 * 1024 * 1024 // len(line.format(0))))
    job = producer.submit(session_id="reader", tool_name="bash", output=big, queue=Queue.BATCH)
    ref = output_ref(redis_client, job.job_id)
    server = start_api()
    took: dict[str, list[float]] = {"grep": [], "gate": []}
    finished: list[str] = []

    def read(kind: str, path: str) -> None:
        with client(server) as http:
            started = time.monotonic()
            response = http.get(path, timeout=120)
        assert response.status_code == 200, response.text
        took[kind].append(time.monotonic() - started)
        finished.append(kind)

    greps = [
        threading.Thread(target=read, args=("grep", f"/v1/outputs/{ref}?grep=no-such-text-{n}"))
        for n in range(12)  # three times the reads one process scans at once: still queued
    ]
    for thread in greps:
        thread.start()
    time.sleep(0.3)  # the reads are under way
    read("gate", "/v1/sessions/other/gate")
    for thread in greps:
        thread.join(120)
    assert len(finished) == 13 and finished[-1] == "grep", finished
    # answered while large reads still ran, and sooner than any of them took alone: never
    # queued behind their decoding and scanning
    assert took["gate"][0] < min(took["grep"]), took


@pytest.mark.slow
def test_replaying_a_payload_missing_job_keeps_its_options(
    settings: Settings, start_worker: StartWorker, redis_client: redis.Redis
) -> None:
    allowed, secret = "http://127.0.0.1:9/hooks/", "s" * 32
    hooked = settings.model_copy(
        update={"webhook_allowed_urls": allowed, "webhook_secret": SecretStr(secret)}
    )
    options = {"callback_url": f"{allowed}done", "budget_chars": 900, "max_summary_chars": 300}
    with Producer(hooked) as producer:
        job = producer.submit(session_id="rp", tool_name="bash", output=OUTPUT, options=options)
        digest = json.loads(redis_client.get(keys.job_meta(job.job_id)))["payload"]
        redis_client.delete(keys.payload(digest))  # the output expired before a worker took it
        start_worker(webhook_allowed_urls=allowed, webhook_secret=secret)
        record = json.loads(wait_for(lambda: listed(settings), "the job dead-lettered")[0])
        assert record["reason"] == "payload_missing"
        producer.submit(session_id="other", tool_name="bash", output=OUTPUT)  # stored again
    env = {"webhook_allowed_urls": allowed, "webhook_secret": secret}
    replayed = tersify(settings, "deadletters", "replay", record["id"], **env)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    new_id = replayed.stdout.strip().rsplit(" ", 1)[-1]
    again = json.loads(redis_client.get(keys.job_meta(new_id)))["job"]
    assert {k: again["options"][k] for k in options} == options


@pytest.mark.slow
def test_the_dead_letter_tools_answer_a_malformed_record_without_a_traceback(
    settings: Settings, redis_client: redis.Redis
) -> None:
    malformed = [
        {"id": "bad-at", "at": "yesterday", "reason": "invalid_job", "detail": None, "job": None},
        {"id": "bad-job", "at": 1.0, "reason": 7, "job": {"job": "x", "payload": 3}},
        {"id": "bad-options", "at": None, "job": {"schema_version": 1, "payload": "ab",
                                                   "job": {"session_id": "s", "options": 5}}},
    ]  # fmt: skip
    for record in malformed:
        redis_client.lpush(keys.DEAD_LETTERS, json.dumps(record))
    redis_client.lpush(keys.DEAD_LETTERS, "not json at all", json.dumps(["a", "list"]))
    for args in (("list",), ("list", "--json"), *(("show", r["id"]) for r in malformed)):
        done = tersify(settings, "deadletters", *args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
    for record in malformed:
        done = tersify(settings, "deadletters", "replay", str(record["id"]))
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert "not replayed" in done.stdout
