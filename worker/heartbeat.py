"""A worker's liveness record in Redis: refreshed on the lease-keeper thread, expires if it dies."""

from __future__ import annotations

import json
import os
import time

from producer import keys
from worker.runtime import Runtime

HEARTBEAT_SECONDS = 10.0
HEARTBEAT_TTL = 30


def beat(rt: Runtime, hostname: str, started: float) -> None:
    """Write this worker's liveness record once."""
    record = {
        "hostname": hostname,
        "pid": os.getpid(),
        "started": started,
        "seen": time.time(),
        "pool": rt.settings.worker_pool,
        "concurrency": rt.settings.worker_concurrency,
    }
    rt.redis.set(keys.worker_alive(hostname), json.dumps(record), ex=HEARTBEAT_TTL)


def start_heartbeat(rt: Runtime, hostname: str) -> None:
    """Beat now and then every ``HEARTBEAT_SECONDS`` on the lease-keeper thread."""
    started = time.time()
    beat(rt, hostname, started)
    rt.leases.every(HEARTBEAT_SECONDS, lambda: beat(rt, hostname, started))
