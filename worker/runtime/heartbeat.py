"""A worker's liveness record in Redis: refreshed on the scheduler's thread, expires if it dies."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import redis

from tersify.client.liveness import BEAT_SCRIPT, HEARTBEAT_TTL_SECONDS
from tersify.settings import Settings
from tersify.store import keys
from tersify.store.redis_url import sync_client

if TYPE_CHECKING:
    from tersify.worker.runtime.runtime import Runtime

HEARTBEAT_SECONDS = 10.0
HEARTBEAT_TTL = HEARTBEAT_TTL_SECONDS


def beat(rt: Runtime, hostname: str, started: float, queues: Sequence[str] = ()) -> None:
    """Write this worker's liveness record once, and renew it among each queue's servers."""
    record = {
        "hostname": hostname,
        "pid": os.getpid(),
        "started": started,
        "seen": time.time(),
        "pool": rt.settings.worker_pool,
        "concurrency": rt.settings.worker_concurrency,
        "queues": list(queues),
    }
    with rt.redis.pipeline(transaction=False) as pipe:
        pipe.set(keys.worker_alive(hostname), json.dumps(record), ex=HEARTBEAT_TTL)
        for queue in queues:
            pipe.eval(BEAT_SCRIPT, 1, keys.serving(queue), hostname, str(HEARTBEAT_TTL * 1000))
        pipe.execute()


def clear(rt: Runtime, hostname: str, queues: Sequence[str] = ()) -> None:
    """Remove the liveness record at a clean shutdown, so checks fail at once."""
    # if Redis is down, the record expires anyway
    with contextlib.suppress(redis.RedisError), rt.redis.pipeline(transaction=False) as pipe:
        pipe.delete(keys.worker_alive(hostname))
        for queue in queues:
            pipe.zrem(keys.serving(queue), hostname)
        pipe.execute()


def default_hostname() -> str:
    """Celery's default node name on this host."""
    return f"celery@{socket.gethostname()}"


def check_alive(settings: Settings, hostname: str | None = None) -> tuple[bool, str]:
    """Whether the worker ``hostname`` beat within its TTL: one GET, no broadcast to workers."""
    name = hostname or default_hostname()
    client = sync_client(settings, socket_timeout=3, socket_connect_timeout=3)
    try:
        raw = client.get(keys.worker_alive(name))
    except redis.RedisError as exc:
        return False, f"{name}: redis unreachable ({type(exc).__name__})"
    finally:
        client.close()
    if not isinstance(raw, bytes):
        return False, f"{name}: no heartbeat in the last {HEARTBEAT_TTL}s"
    age = time.time() - float(json.loads(raw).get("seen", 0))
    return True, f"{name}: alive (last beat {age:.1f}s ago)"
