"""Held input across a Redis crash: gone without persistence, kept with AOF (docs/GATE.md)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from tersify.gate import SessionGate
from tersify.settings import Settings
from tersify.worker.processes.redis_server import find_binary
from tests.helpers import free_port


@contextmanager
def crashing_redis(directory: Path, appendonly: str) -> Iterator[redis.Redis]:
    """A client of a redis-server on ``directory``'s files, killed (SIGKILL) on leaving."""
    binary = find_binary("redis-server")
    assert binary is not None
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory)]
    argv += ["--save", "", "--appendonly", appendonly, "--appendfsync", "always"]
    client = redis.Redis(port=port, decode_responses=True, socket_timeout=2)

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return proc
            except redis.ConnectionError:
                assert proc.poll() is None and time.monotonic() < deadline, "redis did not start"
                time.sleep(0.02)

    proc = start()
    try:
        yield client
    finally:
        proc.kill()
        proc.wait(timeout=10)
        client.close()


@pytest.mark.parametrize(("appendonly", "kept"), [("no", []), ("yes", ["and the docs?"])])
def test_held_input_survives_a_redis_crash_only_with_aof(
    tmp_path: Path, appendonly: str, kept: list[str]
) -> None:
    settings = Settings()
    with crashing_redis(tmp_path, appendonly) as client:
        assert SessionGate(client, settings).hold_input("s1", "and the docs?") == 1
    with crashing_redis(tmp_path, appendonly) as client:
        assert SessionGate(client, settings).take_held("s1") == kept
