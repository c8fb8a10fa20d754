"""What tersify adds around the model call, and how fast the gate tells a waiter it opened.

Jobs arrive open-loop at ``--rate`` per second on one shipped worker. By default the rate is
half the maximum, measured first on the same worker: ``--jobs`` jobs submitted as fast as one
thread can, then waited for (a closed-loop burst, like ``throughput.py``). Even jobs measure
submit → ``Producer.wait`` returned, minus the model call measured directly (``model_p50_ms``,
the same request sent straight to the fake, so the fake's and HTTP's own time is not charged to
tersify); odd jobs measure the result's ``finished_at`` → ``gate.wait_open`` returned, each job
on its own session. Run: ``.venv/bin/python bench/overhead.py --help``.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx
from _harness import FakeModelProcess, burst, percentile, start_tersify_worker, tool_output

from tersify.client import Producer
from tersify.settings import Settings
from tersify.worker.processes.redis_server import LocalRedis


def model_call_seconds(fake: FakeModelProcess, text: str, calls: int) -> list[float]:
    """Time the bare HTTP call to the fake model, as the worker would make it."""
    times = []
    with httpx.Client(base_url=fake.openai_base_url, timeout=30.0) as client:
        for _ in range(calls):
            started = time.perf_counter()
            response = client.post(
                "/chat/completions",
                json={"model": "fake-model", "messages": [{"role": "user", "content": text}]},
            )
            response.raise_for_status()
            times.append(time.perf_counter() - started)
    return times


def one_job(producer: Producer, index: int, text: str) -> tuple[str, float]:
    """Submit one job; ("result", submit → result seconds) or ("gate", stored → open seconds)."""
    session = f"overhead-{index}"
    started = time.perf_counter()
    handle = producer.submit(session_id=session, tool_name="grep", output=text)
    if index % 2 == 0:
        handle.wait(timeout=60)
        return "result", time.perf_counter() - started
    if not producer.gate.wait_open(session, timeout=60):
        raise TimeoutError(f"gate of {session} stayed closed")
    opened = time.time()
    result = producer.get(handle.job_id)
    if result is None:
        raise RuntimeError("the gate opened before the result was stored")
    return "gate", opened - result.finished_at.timestamp()


def open_loop(
    producer: Producer, texts: list[str], rate: float, latency: float, max_seconds: float
) -> dict[str, list[float]]:
    """Submit ``texts`` at ``rate`` per second, each from its own thread; the measured times."""
    times: dict[str, list[float]] = {"result": [], "gate": []}
    in_flight = int(rate * latency * 2) + 16  # Little's law, with room for a slow tail
    with ThreadPoolExecutor(in_flight) as pool:
        warm = [pool.submit(one_job, producer, 2 * i, f"warm-up {i}\n{texts[0]}") for i in range(8)]
        for future in warm:  # first calls build clients and connections: not counted
            future.result(timeout=max_seconds)
        started = time.monotonic()
        futures = []
        for i, text in enumerate(texts):
            due = started + i / rate
            if due > started + max_seconds:
                break
            time.sleep(max(0.0, due - time.monotonic()))
            futures.append(pool.submit(one_job, producer, i, text))
        for future in futures:
            kind, seconds = future.result(timeout=max_seconds)
            times[kind].append(seconds)
    return times


def main(argv: list[str] | None = None) -> int:
    """Drive the load, print one summary line."""
    defaults = Settings()
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--latency-ms", type=float, default=200.0)
    p.add_argument("--jobs", type=int, default=1000)
    p.add_argument(
        "--rate", type=float, default=None, help="arrivals per second (default: ½ measured max)"
    )
    p.add_argument("--chars", type=int, default=4000)
    p.add_argument("--pool", default=defaults.worker_pool)
    p.add_argument("--concurrency", type=int, default=defaults.worker_concurrency)
    p.add_argument("--launcher", choices=("tersify", "celery"), default="tersify")
    p.add_argument("--celery-arg", action="append", default=[], help="with --launcher celery")
    p.add_argument("--max-seconds", type=float, default=120.0)
    args = p.parse_args(argv)
    latency = args.latency_ms / 1000
    texts = [tool_output(i, args.chars) for i in range(args.jobs)]
    with (
        TemporaryDirectory(prefix="tersify-bench-") as tmp,
        LocalRedis() as server,
        FakeModelProcess(args.latency_ms, Path(tmp)) as fake,
    ):
        model = model_call_seconds(fake, texts[0], 20)
        worker = start_tersify_worker(
            server.url,
            fake.openai_base_url,
            args.pool,
            args.concurrency,
            Path(tmp),
            args.launcher,
            tuple(args.celery_arg),
        )
        try:
            with Producer(Settings(redis_url=server.url)) as producer:
                rate = args.rate
                if rate is None:
                    # Outputs of their own: a repeat would be answered from the result cache.
                    outputs = [tool_output(-1 - i, args.chars) for i in range(args.jobs)]
                    done, seconds = burst(producer, outputs, args.max_seconds, "burst")
                    measured = len(done) / seconds
                    rate = 0.5 * measured
                    print(f"maximum {measured:.1f}/s over {len(texts)} jobs; running at half")
                times = open_loop(producer, texts, rate, latency, args.max_seconds)
        finally:
            worker.stop()
    model_p50 = percentile(model, 0.5)
    over = [(t - model_p50) * 1e3 for t in times["result"]]
    gate = [t * 1e3 for t in times["gate"]]
    print(
        f"{len(over)} result jobs, {len(gate)} gate jobs at {rate:.1f}/s; "
        f"model call p50 {model_p50 * 1e3:.2f} ms; submit→result p50 "
        f"{percentile(times['result'], 0.5) * 1e3:.2f} ms; gate p50 {percentile(gate, 0.5):.2f} ms"
    )
    print(
        f"overhead: p50_ms={percentile(over, 0.5):.2f} p99_ms={percentile(over, 0.99):.2f} "
        f"gate_notify_p99_ms={percentile(gate, 0.99):.2f} gate_notify_p50_ms="
        f"{percentile(gate, 0.5):.2f} model_p50_ms={model_p50 * 1e3:.2f} rate={rate:.1f} "
        f"pool={args.pool} concurrency={args.concurrency}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
