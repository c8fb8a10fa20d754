"""Session-wide fixtures: a real redis-server on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from worker.localredis import LocalRedis


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
