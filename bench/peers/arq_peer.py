"""The arq peer: the same one HTTP call per job, run by ``--peer-python`` (arq needs redis < 6).

``python bench/peers/arq_peer.py worker REDIS_URL MODEL_URL SLOTS [POLL_DELAY]``: an arq worker
with ``max_jobs=SLOTS``, ``poll_delay=POLL_DELAY`` seconds (default 0.01) and one one-connection
``httpx.AsyncClient`` per slot (its best settings on the benchmark machine);
``python bench/peers/arq_peer.py produce REDIS_URL MODEL_URL JOBS CHARS``: enqueue the jobs.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, ClassVar

import httpx
from arq import create_pool
from arq.connections import RedisSettings
from arq.worker import run_worker

DONE_KEY = "bench:done"
START_KEY = "bench:start"
READY_KEY = "bench:ready:arq"


def text_for(index: int, chars: int) -> str:
    """A unique tool output of ``chars`` characters (the shape matters little to the fake)."""
    line = f"src/pkg_{index}/module.py:1: result = compute_{index}(value, options={{}})\n"
    return (line * (chars // len(line) + 1))[:chars]


async def call(ctx: dict[str, Any], text: str) -> None:
    """POST one chat completion on a free slot's client, count the job as done."""
    clients: asyncio.Queue[httpx.AsyncClient] = ctx["clients"]
    client = await clients.get()
    try:
        response = await client.post(
            "/chat/completions",
            json={"model": "fake-model", "messages": [{"role": "user", "content": text}]},
            headers={"Authorization": "Bearer k"},
        )
        response.raise_for_status()
        response.json()
    finally:
        clients.put_nowait(client)
    await ctx["redis"].incr(DONE_KEY)


def worker(redis_url: str, model_url: str, slots: int, poll_delay: float = 0.01) -> None:
    """Run an arq worker until SIGTERM."""
    poll_delay_s = poll_delay

    async def startup(ctx: dict[str, Any]) -> None:
        clients: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        for _ in range(slots):
            clients.put_nowait(
                httpx.AsyncClient(
                    base_url=model_url,
                    timeout=30.0,
                    limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
                )
            )
        ctx["clients"] = clients
        await ctx["redis"].set(READY_KEY, 1)

    class WorkerSettings:
        functions: ClassVar[list[Any]] = [call]
        redis_settings = RedisSettings.from_dsn(redis_url)
        max_jobs = slots
        keep_result = 0
        # arq's default (0.5 s between polls of the queue) leaves freed slots idle: 392 → 631
        # jobs/s with 0.01 s on the benchmark machine (docs/PERFORMANCE.md).
        poll_delay = poll_delay_s
        on_startup = startup
        handle_signals = True

    run_worker(WorkerSettings)  # type: ignore[arg-type]


async def produce(redis_url: str, jobs: int, chars: int) -> None:
    """Enqueue ``jobs`` calls; mark when the first one went out."""
    pool = await create_pool(RedisSettings.from_dsn(redis_url))
    await pool.set(START_KEY, repr(time.time()))
    for i in range(jobs):
        await pool.enqueue_job("call", text_for(i, chars))
    await pool.aclose()


def main() -> None:
    """Dispatch on the mode argument."""
    mode, redis_url, model_url, *rest = sys.argv[1:]
    if mode == "worker":
        worker(redis_url, model_url, int(rest[0]), *(float(x) for x in rest[1:2]))
    else:
        asyncio.run(produce(redis_url, int(rest[0]), int(rest[1])))


if __name__ == "__main__":
    main()
