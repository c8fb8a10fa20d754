"""A private Redis Sentinel group on loopback: a primary, a replica and three sentinels.

For the tests and the soak: the sentinels watch the primary under ``PRIMARY_NAME`` and fail
over to the replica within a few seconds of the primary dying (``down-after`` 1 s).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

import redis

from tersify.errors import ConfigurationError
from tersify.worker.processes.redis_server import (
    LocalRedis,
    answers_ping,
    free_port,
    require_binary,
    terminate,
)

PRIMARY_NAME = "tersify"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000


class RedisSentinelMissingError(ConfigurationError):
    """No ``redis-sentinel`` binary on PATH."""


def _ask(client: redis.Redis, question: str) -> Any:
    """``SENTINEL QUESTION PRIMARY_NAME``, unparsed (redis-py 6's parsers of these break)."""
    return client.execute_command("SENTINEL", question, PRIMARY_NAME)  # type: ignore[no-untyped-call]


class LocalSentinel:
    """One ``redis-sentinel`` process watching ``PRIMARY_NAME`` on a free loopback port."""

    def __init__(self, primary_port: int, password: str | None, sentinel_password: str | None):
        self.binary = require_binary("redis-sentinel", RedisSentinelMissingError)
        self.port = free_port()
        self.sentinel_password = sentinel_password
        self._dir = Path(tempfile.mkdtemp(prefix="tersify-sentinel-"))
        lines = [
            f"port {self.port}",
            "bind 127.0.0.1",
            "daemonize no",
            f"dir {self._dir}",
            f"logfile {self._dir / 'sentinel.log'}",
            f"sentinel monitor {PRIMARY_NAME} 127.0.0.1 {primary_port} 2",
            f"sentinel down-after-milliseconds {PRIMARY_NAME} {DOWN_AFTER_MS}",
            f"sentinel failover-timeout {PRIMARY_NAME} {FAILOVER_TIMEOUT_MS}",
            f"sentinel parallel-syncs {PRIMARY_NAME} 1",
        ]
        if password:
            lines.append(f"sentinel auth-pass {PRIMARY_NAME} {password}")
        if sentinel_password:
            lines.append(f"requirepass {sentinel_password}")
        self._conf = self._dir / "sentinel.conf"
        self._conf.write_text("\n".join(lines) + "\n")
        self._proc: subprocess.Popen[bytes] | None = None

    def client(self) -> redis.Redis:
        """A client of this sentinel."""
        return redis.Redis(
            port=self.port,
            password=self.sentinel_password,
            socket_timeout=1.0,
            decode_responses=True,
        )

    def start(self, timeout: float = 10.0) -> None:
        """Start the sentinel and wait until it answers PING."""
        self._proc = subprocess.Popen([self.binary, str(self._conf)], stdin=subprocess.DEVNULL)
        if not answers_ping(self.client(), self._proc, timeout):
            log = self.log()  # before ``stop`` removes it
            self.stop()
            raise RuntimeError(f"redis-sentinel did not start: {log}")

    def log(self) -> str:
        """The end of the sentinel's log."""
        path = self._dir / "sentinel.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        """Stop the sentinel (SIGTERM, then SIGKILL) and remove its directory."""
        terminate(self._proc)
        self._proc = None
        shutil.rmtree(self._dir, ignore_errors=True)


class SentinelGroup:
    """A primary, one replica of it and three sentinels; ``url`` is the ``sentinel://`` URL."""

    def __init__(
        self,
        password: str | None = None,
        sentinel_password: str | None = None,
        *,
        appendonly: bool = False,
    ) -> None:
        self.password = password
        self.sentinel_password = sentinel_password
        self.primary = LocalRedis(password=password, appendonly=appendonly)
        self.replica = LocalRedis(
            password=password, appendonly=appendonly, replica_of=self.primary.port
        )
        self.sentinels = [
            LocalSentinel(self.primary.port, password, sentinel_password) for _ in range(3)
        ]

    @property
    def url(self) -> str:
        """``TERSIFY_REDIS_URL`` for this group (the passwords are separate settings)."""
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"sentinel://{hosts}/{PRIMARY_NAME}/0"

    def start(self, timeout: float = 30.0) -> None:
        """Start every process; return once the replica is in sync and every sentinel sees it."""
        self.primary.start()
        self.replica.start()
        for sentinel in self.sentinels:
            sentinel.start()
        self._wait(lambda: self._replica_synced() and self._sentinels_agree(), "group", timeout)

    def primary_port(self) -> int | None:
        """The port of the primary the first answering sentinel names, or None."""
        for sentinel in self.sentinels:
            client = sentinel.client()
            try:
                address = _ask(client, "GET-MASTER-ADDR-BY-NAME")
                return int(address[1]) if address else None
            except redis.RedisError:
                continue
            finally:
                client.close()
        return None

    def kill_primary(self) -> None:
        """SIGKILL the primary: what was not replicated yet is gone."""
        self.primary.kill()

    def wait_for_failover(self, timeout: float = 30.0) -> None:
        """Wait until the sentinels name the replica as primary and it accepts writes."""
        self._wait(lambda: self.primary_port() == self.replica.port, "fail-over", timeout)

    def _replica_synced(self) -> bool:
        client = redis.Redis(port=self.replica.port, password=self.password, socket_timeout=1.0)
        try:
            info: dict[str, Any] = client.info("replication")  # type: ignore[assignment]
            return bool(info["master_link_status"] == "up")
        except redis.RedisError:
            return False
        finally:
            client.close()

    def _sentinels_agree(self) -> bool:
        for sentinel in self.sentinels:
            client = sentinel.client()
            try:
                reply = _ask(client, "MASTER")
                primary = dict(zip(reply[::2], reply[1::2], strict=True))
                if int(primary.get("num-slaves", 0)) < 1:
                    return False
                if int(primary.get("num-other-sentinels", 0)) < len(self.sentinels) - 1:
                    return False
            except redis.RedisError:
                return False
            finally:
                client.close()
        return True

    def _wait(self, check: Callable[[], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                logs = "\n".join(s.log() for s in self.sentinels)
                raise RuntimeError(f"sentinel {what} not ready within {timeout:g}s:\n{logs}")
            time.sleep(0.1)

    def cleanup(self) -> None:
        """Stop every process and remove their directories."""
        for sentinel in self.sentinels:
            sentinel.stop()
        self.replica.cleanup()
        self.primary.cleanup()

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.cleanup()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
