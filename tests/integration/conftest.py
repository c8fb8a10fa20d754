"""Fixtures that start real worker processes against the session's redis-server and fake model."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tersify.client import Producer
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.redis_server import LocalRedis
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, hang
from tests.integration.api import TOKENS, ApiServer
from tests.integration.gateway import Gateway, launch

API_KEY = "sk-test-not-a-real-key-0123456789"


def provider_env(fake: FakeModelServer, provider: str) -> dict[str, str]:
    """Worker environment that sends summaries to ``provider`` on the fake server."""
    return {
        "summary_provider": provider,
        "anthropic_api_key": API_KEY,
        "anthropic_base_url": fake.anthropic_base_url,
        "openai_api_key": API_KEY,
        "openai_base_url": fake.openai_base_url,
        "model_timeout_seconds": "2",
    }


def hanging_env(fake: FakeModelServer, provider: str, **extra: str) -> dict[str, str]:
    """Worker environment for a test that kills a worker mid-call: the model hangs, the call
    waits 60 s, and the broker hands an unacknowledged job on after 3 s."""
    fake.set_default(hang(60))
    return {
        **provider_env(fake, provider),
        **extra,
        "model_timeout_seconds": "60",
        "visibility_timeout_seconds": "3",
        "gate_lease_seconds": "30",
    }


def wait_for_cached_summaries(client: redis.Redis, count: int, timeout: float = 10.0) -> None:
    """Wait until ``count`` model summaries are in the cache (they are written behind the job)."""
    deadline = time.monotonic() + timeout
    while len(list(client.scan_iter(keys.summary_cache("*")))) < count:
        assert time.monotonic() < deadline, f"fewer than {count} cached summaries after {timeout}s"
        time.sleep(0.01)


@pytest.fixture
def settings(redis_server: LocalRedis, redis_client: Any, tmp_path: Path) -> Settings:
    """Settings for one test: the session's Redis (emptied), a fresh session-log directory."""
    return Settings(redis_url=redis_server.url, session_log_dir=tmp_path / "sessions")


@pytest.fixture
def start_worker(settings: Settings, tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    """Start worker processes; all are stopped when the test ends."""
    started: list[WorkerProcess] = []

    def start(**env: str) -> WorkerProcess:
        env.setdefault("session_log_dir", str(settings.session_log_dir))
        env.setdefault("log_format", "json")
        worker = WorkerProcess(settings, tmp_path, **env).start()
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def producer(settings: Settings) -> Iterator[Producer]:
    """A producer on the test's settings."""
    with Producer(settings) as prod:
        yield prod


@pytest.fixture
def start_api(settings: Settings, tmp_path: Path) -> Iterator[Callable[..., ApiServer]]:
    """Start API servers (one process each) on the test's Redis, each with ``TOKENS`` unless
    ``api_tokens`` is given, and under ``wrapper`` (``sh -c 'ulimit …'``) when one is; stopped
    when the test ends."""
    started: list[ApiServer] = []

    def start(*, wrapper: tuple[str, ...] = (), **env: str) -> ApiServer:
        env.setdefault("api_tokens", TOKENS)
        server = ApiServer(settings, tmp_path, workers=1, **env)
        server.argv = [*wrapper, *server.argv]
        started.append(server.start())
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def api_server(start_api: Callable[..., ApiServer]) -> ApiServer:
    """One ``tersify api`` process (one worker) on the test's Redis, with ``TOKENS``."""
    return start_api()


@pytest.fixture
def start_gateway(
    settings: Settings, fake_model: FakeModelServer, tmp_path: Path
) -> Iterator[Callable[..., Gateway]]:
    """Start ``tersify gateway`` processes before the fake model; all stop when the test ends."""
    started: list[Gateway] = []

    def start(**env: str) -> Gateway:
        gateway = launch(settings, fake_model.url, tmp_path, **env)
        started.append(gateway)
        return gateway

    yield start
    for gateway in started:
        gateway.process.stop()
