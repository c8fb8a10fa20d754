"""The Dramatiq peer: the same one HTTP call per job, run by ``--peer-python``.

``python bench/peers/dramatiq_peer.py worker REDIS_URL MODEL_URL SLOTS [threads|gevent]``: a
Dramatiq worker with ``SLOTS`` worker threads (``dramatiq -t SLOTS``; or greenlets, as
``dramatiq-gevent -t SLOTS``), each with its own one-connection httpx client. Threads 200 is its
best setting on the benchmark machine (docs/PERFORMANCE.md);
``python bench/peers/dramatiq_peer.py produce REDIS_URL MODEL_URL JOBS CHARS``: send the jobs.
"""

from __future__ import annotations

import sys

if sys.argv[1:2] == ["worker"] and sys.argv[5:6] == ["gevent"]:
    from gevent import monkey  # before anything imports socket, ssl or threading

    monkey.patch_all()

import signal
import threading
import time
from typing import Any

import dramatiq
import httpx
from dramatiq.brokers.redis import RedisBroker

DONE_KEY = "bench:done"
START_KEY = "bench:start"
READY_KEY = "bench:ready:dramatiq"


def text_for(index: int, chars: int) -> str:
    """A unique tool output of ``chars`` characters (the shape matters little to the fake)."""
    line = f"src/pkg_{index}/module.py:1: result = compute_{index}(value, options={{}})\n"
    return (line * (chars // len(line) + 1))[:chars]


def build(redis_url: str, model_url: str) -> tuple[RedisBroker, Any]:
    """The broker and the actor (declared after the broker, as Dramatiq wants)."""
    broker = RedisBroker(url=redis_url, max_connections=512)
    dramatiq.set_broker(broker)
    local = threading.local()

    def call(text: str) -> None:
        client: httpx.Client | None = getattr(local, "client", None)
        if client is None:
            client = httpx.Client(
                base_url=model_url,
                timeout=30.0,
                limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            )
            local.client = client
        response = client.post(
            "/chat/completions",
            json={"model": "fake-model", "messages": [{"role": "user", "content": text}]},
            headers={"Authorization": "Bearer k"},
        )
        response.raise_for_status()
        response.json()
        broker.client.incr(DONE_KEY)

    return broker, dramatiq.actor(call, actor_name="call", max_retries=0)


def worker(redis_url: str, model_url: str, slots: int) -> None:
    """Run the worker until SIGTERM."""
    broker, _ = build(redis_url, model_url)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    runner = dramatiq.Worker(broker, worker_threads=slots, worker_timeout=100)
    runner.start()
    broker.client.set(READY_KEY, 1)
    while not stop.wait(0.5):
        pass
    runner.stop(timeout=5000)


def produce(redis_url: str, model_url: str, jobs: int, chars: int) -> None:
    """Send ``jobs`` calls; mark when the first one went out."""
    broker, actor = build(redis_url, model_url)
    broker.client.set(START_KEY, repr(time.time()))
    for i in range(jobs):
        actor.send(text_for(i, chars))


def main() -> None:
    """Dispatch on the mode argument."""
    mode, redis_url, model_url, *rest = sys.argv[1:]
    if mode == "worker":
        worker(redis_url, model_url, int(rest[0]))
    else:
        produce(redis_url, model_url, int(rest[0]), int(rest[1]))


if __name__ == "__main__":
    main()
