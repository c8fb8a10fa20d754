"""Session-wide fixtures: a real redis-server on a free loopback port, the fake model APIs."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
import redis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from tersify.worker.processes.redis_server import LocalRedis
from tests.fakemodel import FakeModelServer

# No hypothesis deadline, nor its too-slow health check: on a loaded machine (two suites side by
# side) an example's time says nothing about the code, and speed is measured in bench/.
hypothesis_settings.register_profile(
    "loaded", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("loaded")


def pytest_configure(config: pytest.Config) -> None:
    """Let the processes the tests start feel Ctrl-C, however the suite itself was started.

    A background job of a non-interactive shell starts with SIGINT ignored, and an ignored
    signal stays ignored in every child: the tests that interrupt a CLI (``status --watch``,
    ``reprocess``) would then wait for it in vain. A handled signal is reset in a child.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[LocalRedis]:
    """One private redis-server for the whole test session (no persistence)."""
    server = LocalRedis()
    server.start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def redis_client(redis_server: LocalRedis) -> Iterator[redis.Redis]:
    """A client on the session's server, with the database emptied before each test."""
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    client.flushall()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def fake_model_server() -> Iterator[FakeModelServer]:
    """One loopback fake of the Anthropic and OpenAI APIs for the whole session."""
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def fake_model(fake_model_server: FakeModelServer) -> Iterator[FakeModelServer]:
    """The session's fake model, reset to answering ok() before and after the test."""
    fake_model_server.reset()
    yield fake_model_server
    fake_model_server.reset()
