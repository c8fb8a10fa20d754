"""Benchmark the session gate on a private loopback redis-server.

(a) notify: the time from ``release``/``complete`` returning in one thread to ``wait_open``
returning in another (the waiter is subscribed before the gate opens, so this is the pub/sub
path, not the fallback re-check); (b) the cost of one ``renew``. Run:
``.venv/bin/python bench/gate_notify.py [rounds]``; the last line is machine-readable.
"""

from __future__ import annotations

import queue
import statistics
import sys
import threading
import time

import redis

from tersify.gate import SessionGate
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.redis_server import LocalRedis

BUDGET_SECONDS = 60.0
RENEWS = 5000
SESSION = "bench-session"
RESULT = '{"text": "a short summary"}'


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def waiter(gate: SessionGate, rounds: queue.Queue[int], opened: queue.Queue[float]) -> None:
    """Wait for the gate once per round and report when ``wait_open`` returned."""
    while rounds.get() >= 0:
        ok = gate.wait_open(SESSION, timeout=5.0)
        opened.put(time.perf_counter() if ok else float("nan"))


def measure_notify(gate: SessionGate, client: redis.Redis, rounds: int) -> list[float]:
    """Seconds from the gate opening (call returned) to the waiter's ``wait_open`` returning."""
    todo: queue.Queue[int] = queue.Queue()
    opened: queue.Queue[float] = queue.Queue()
    thread = threading.Thread(target=waiter, args=(gate, todo, opened), daemon=True)
    thread.start()
    channel = keys.gate_events(SESSION)
    latencies: list[float] = []
    stop_at = time.monotonic() + BUDGET_SECONDS
    try:
        for i in range(rounds):
            if time.monotonic() > stop_at:
                print(f"notify: stopped after {i} rounds (time budget)")
                break
            job = f"job-{i}"
            token = gate.close_for(SESSION, job)
            todo.put(i)
            while client.pubsub_numsub(channel)[0][1] < 1:  # the waiter is listening
                time.sleep(0.0002)
            time.sleep(0.001)  # let it finish its first state check and block
            if i % 2:
                gate.release(SESSION, job, token)
            else:
                gate.complete(job, RESULT, ttl=60, session_id=SESSION, token=token)
            done = time.perf_counter()
            # the waiter may wake before this thread is scheduled again: that counts as 0
            latencies.append(max(0.0, opened.get(timeout=10) - done))
            while client.pubsub_numsub(channel)[0][1] > 0:  # the waiter left; no overlap
                time.sleep(0.0002)
    finally:
        todo.put(-1)
        thread.join(10)
    return latencies


def measure_renew(gate: SessionGate, count: int) -> list[float]:
    """Seconds per ``renew`` of one live hold."""
    token = gate.close_for(SESSION, "renewed-job")
    costs = []
    for _ in range(count):
        started = time.perf_counter_ns()
        if not gate.renew(SESSION, "renewed-job", token):
            raise RuntimeError("renew lost its hold")
        costs.append((time.perf_counter_ns() - started) / 1e9)
    gate.release(SESSION, "renewed-job", token)
    return costs


def main() -> None:
    """Start a private Redis, measure, print a summary line."""
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with LocalRedis() as server:
        client = redis.Redis.from_url(server.url, decode_responses=True)
        try:
            gate = SessionGate(client, Settings())
            notify = measure_notify(gate, client, rounds)
            renew = measure_renew(gate, RENEWS)
        finally:
            client.close()
    n50, n99 = percentile(notify, 0.5) * 1e3, percentile(notify, 0.99) * 1e3
    r50, r99 = percentile(renew, 0.5) * 1e6, percentile(renew, 0.99) * 1e6
    print(
        f"notify: {len(notify)} rounds, mean {statistics.fmean(notify) * 1e3:.3f} ms, "
        f"max {max(notify) * 1e3:.3f} ms; renew: {len(renew)} calls, "
        f"mean {statistics.fmean(renew) * 1e6:.1f} us"
    )
    print(
        f"gate: notify_p50_ms={n50:.3f} notify_p99_ms={n99:.3f} "
        f"renew_p50_us={r50:.1f} renew_p99_us={r99:.1f}"
    )


if __name__ == "__main__":
    main()
