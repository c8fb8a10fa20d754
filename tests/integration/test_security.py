"""Secrets never leak; Redis with a password works; sessions cannot touch each other's gates."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from tersify.client import Producer
from tersify.contract import Method, Queue, new_job_id
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.worker.model.providers import make_provider
from tersify.worker.model.providers.base import ModelRequest
from tersify.worker.processes.redis_server import LocalRedis
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import (
    FakeModelServer,
    close_mid_body,
    empty,
    hang,
    malformed,
    oversized,
    slow_drip,
    status,
)
from tests.integration.conftest import API_KEY, provider_env

StartWorker = Callable[..., WorkerProcess]
LOG = "\n".join(f"collected item {i}" for i in range(300)) + "\nFAILED tests/test_x.py::test_y\n"
FAULTS = {
    "LEAK-429": status(429),
    "LEAK-500": status(500),
    "LEAK-401": status(401),
    "LEAK-BAD": malformed(),
    "LEAK-EMPTY": empty(),
    "LEAK-BIG": oversized(5000),
    "LEAK-CUT": close_mid_body(),
    "LEAK-DRIP": slow_drip(5),
    "LEAK-HANG": hang(30),
}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_api_key_appears_in_no_log_result_dead_letter_or_error(
    provider: str,
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
    redis_client: redis.Redis,
) -> None:
    for marker, behaviour in FAULTS.items():
        fake_model.add_rule(marker, behaviour)
    worker = start_worker(**provider_env(fake_model, provider), model_max_attempts="1")
    handles = [
        producer.submit(session_id=f"leak-{i}", tool_name="bash", output=f"{m}\n{LOG}")
        for i, m in enumerate(FAULTS)
    ]
    results = [h.wait(30) for h in handles]
    assert all(r.method is Method.FALLBACK for r in results)
    assert all(API_KEY not in r.model_dump_json() for r in results)
    worker.stop()
    assert API_KEY not in worker.log()
    for key in redis_client.scan_iter("tersify:*"):
        if redis_client.type(key) == "string":
            assert API_KEY not in (redis_client.get(key) or "")
    sessions = Path(producer.settings.session_log_dir)
    assert all(API_KEY not in p.read_text() for p in sessions.glob("*.jsonl"))


def test_provider_errors_and_reprs_never_carry_the_key(fake_model: FakeModelServer) -> None:
    settings = Settings(**provider_env(fake_model, "openai"))  # type: ignore[arg-type]
    assert API_KEY not in repr(settings) and API_KEY not in str(settings.model_dump())
    for marker, behaviour in FAULTS.items():
        fake_model.add_rule(marker, behaviour)
    for name in ("anthropic", "openai"):
        provider = make_provider(settings, name, pool_size=1)
        assert provider is not None and API_KEY not in repr(provider)
        try:
            for marker in FAULTS:
                req = ModelRequest(system="s", user=f"{marker} {LOG}", max_tokens=50)
                try:
                    provider.complete(req, timeout=1.0)
                except ProviderError as error:
                    text = f"{error!s} {error!r} {error.detail} {error.__cause__!r}"
                    assert API_KEY not in text, marker
        finally:
            provider.close()


@pytest.fixture
def password_redis() -> Iterator[LocalRedis]:
    server = LocalRedis(password="s3cret-pass")
    server.start()
    yield server
    server.cleanup()


def test_a_redis_with_a_password_serves_jobs_and_the_gate(
    password_redis: LocalRedis, tmp_path: Path
) -> None:
    settings = Settings(redis_url=password_redis.url, session_log_dir=tmp_path)
    worker = WorkerProcess(settings, tmp_path, log_format="json", session_log_dir=str(tmp_path))
    worker.start()
    try:
        with Producer(settings) as producer:
            handle = producer.submit(session_id="pw", tool_name="bash", output=LOG)
            assert handle.wait(30).method is Method.EXTRACTIVE
            assert producer.gate.wait_open("pw", timeout=5)
    finally:
        worker.stop()
    assert "s3cret-pass" not in worker.log()
    refused = redis.Redis.from_url(password_redis.url.replace(":s3cret-pass@", ""))
    with pytest.raises(redis.AuthenticationError):
        refused.ping()
    refused.close()


def test_one_sessions_job_cannot_release_another_sessions_gate(producer: Producer) -> None:
    gate = producer.gate
    token = gate.close_for("alice", "job-alice-1")
    assert gate.release("mallory", "job-alice-1", token) is False
    assert gate.release("alice", "job-alice-1", token + 1) is False
    assert not gate.is_open("alice")
    assert gate.release("alice", "job-alice-1", token) is True
    assert gate.is_open("alice")


def test_job_ids_are_128_random_bits() -> None:
    ids = {new_job_id() for _ in range(10_000)}
    assert len(ids) == 10_000
    assert all(re.fullmatch(r"[0-9a-f]{32}", job_id) for job_id in ids)


def test_the_broker_message_shows_monitors_the_job_id_not_its_command_or_query(
    settings: Settings, redis_client: redis.Redis
) -> None:
    # No worker runs: the message stays in the queue to be read as Celery's monitors would.
    with Producer(settings) as producer:
        handle = producer.submit(
            session_id="monitored",
            tool_name="bash",
            output=LOG,
            command="curl -H 'Authorization: Bearer LEAK-TOKEN' https://x",
            query="why LEAK-QUERY",
        )
    envelope = json.loads(redis_client.lindex(Queue.INTERACTIVE.value, 0))
    headers = envelope["headers"]
    assert headers["id"] == handle.job_id
    assert headers["argsrepr"] == f"(<job {handle.job_id}>,)"
    assert headers["kwargsrepr"] == "{}"
    assert "LEAK" not in json.dumps(headers) + json.dumps(envelope["properties"])
    # The job itself still carries them, for the worker.
    body = base64.b64decode(envelope["body"]).decode()
    assert "LEAK-TOKEN" in body and "LEAK-QUERY" in body
