"""A private ``redis-server`` on a free loopback port: for the demo, the tests and the benchmarks.

No persistence unless asked (``appendonly``: AOF, fsync every second, as deploy/ runs it), its
own temporary directory, stopped (and restartable on the same port) by its owner; optionally a
replica of another one (``replica_of``). Production deployments point ``TERSIFY_REDIS_URL`` at
a real Redis instead.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Self

import redis

from tersify.errors import ConfigurationError


class RedisServerMissingError(ConfigurationError):
    """No ``redis-server`` binary on PATH."""


def find_binary(name: str) -> str | None:
    """``redis-server`` or ``redis-sentinel``: on PATH, else beside this Python (``make demo``
    and ``make check`` link them into the venv from Debian's redis-tools, without a service)."""
    return shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))


def require_binary(name: str, missing: type[ConfigurationError]) -> str:
    """The path of ``name`` (``find_binary``); ``missing`` raised when there is none."""
    binary = find_binary(name)
    if binary is None:
        raise missing(
            f"{name} not found on PATH or in the venv: `make redis-server` links it "
            "from Debian's redis-tools"
        )
    return binary


def answers_ping(client: redis.Redis, proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Whether ``client`` got an answer to PING before ``proc`` exited or ``timeout`` passed;
    ``client`` is closed either way."""
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                client.ping()
                return True
            except redis.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    return False
                time.sleep(0.02)
    finally:
        client.close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def terminate(proc: subprocess.Popen[Any] | None, timeout: float = 10.0) -> None:
    """Stop ``proc`` with SIGTERM, then SIGKILL if it outlives ``timeout``; wait for it."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


class LocalRedis:
    """Start, stop, kill and restart one ``redis-server`` process on loopback."""

    def __init__(
        self,
        port: int | None = None,
        password: str | None = None,
        *,
        appendonly: bool = False,
        replica_of: int | None = None,
    ) -> None:
        self.binary = require_binary("redis-server", RedisServerMissingError)
        self.port = port or free_port()
        self.password = password
        self.appendonly = appendonly
        self.replica_of = replica_of
        self._dir = Path(tempfile.mkdtemp(prefix="tersify-redis-"))
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://`` URL of this server (with the password when one is set)."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        """Start the server and wait until it answers PING."""
        args = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--appendfsync",
            "everysec",
            "--maxmemory-policy",
            "noeviction",
            "--dir",
            str(self._dir),
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
            "--logfile",
            str(self._dir / "redis.log"),
        ]
        if self.password:
            args += ["--requirepass", self.password, "--masterauth", self.password]
        if self.replica_of is not None:
            args += ["--replicaof", "127.0.0.1", str(self.replica_of)]
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url, socket_timeout=1.0)
        if not answers_ping(client, self._proc, timeout):
            log = (self._dir / "redis.log").read_text(errors="replace")[-2000:]
            self.stop()
            raise RuntimeError(f"redis-server did not start: {log}")

    def stop(self) -> None:
        """Stop the server gracefully (SIGTERM), waiting for it to exit."""
        terminate(self._proc)
        self._proc = None

    def kill(self) -> None:
        """Kill the server at once (SIGKILL): everything in memory is gone."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=10)
        self._proc = None

    def restart(self) -> None:
        """Kill and start again on the same port: empty, or from its AOF with ``appendonly``."""
        self.kill()
        self.start()

    def cleanup(self) -> None:
        """Stop the server and remove its directory."""
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
