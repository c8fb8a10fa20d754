"""Soak: steady load for a bounded time with model faults, worker kills and one Redis fault.

    python bench/soak.py [--minutes 10] [--rate 8] [--workers 2] [--seed 1] [--persist|--sentinel]

Starts a private redis-server, the fake model (with a share of 500s, 429s, malformed answers and
hangs) and worker processes; submits jobs into a set of sessions at a steady rate; SIGKILLs a
random worker every quarter of the run (and starts a new one). At 60 % of the run Redis fails
once, in one of three modes: SIGKILLed and restarted empty (no persistence, the default);
SIGKILLed and restarted from its append-only file (``--persist``: AOF, fsync every second, as
deploy/ runs it); or, under Redis Sentinel (a primary, a replica, three sentinels), the primary
SIGKILLed and the replica promoted (``--sentinel``). The client side behaves as a careful
backend: a job whose result does not arrive within its timeout is submitted again (its output is
still in the backend's hands), up to three tries. Prints a table (fault → expected → observed)
and ends with ``soak: submitted=N results=N lost=N applied_twice=N resubmitted=N
max_gate_closed_s=X fallback_rate=Y``.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from tempfile import TemporaryDirectory

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tersify.client import Producer  # noqa: E402
from tersify.contract import Method  # noqa: E402
from tersify.errors import TersifyError  # noqa: E402
from tersify.settings import Settings  # noqa: E402
from tersify.store import keys  # noqa: E402
from tersify.worker.processes.redis_sentinel import SentinelGroup  # noqa: E402
from tersify.worker.processes.redis_server import LocalRedis  # noqa: E402
from tersify.worker.processes.worker_process import WorkerProcess  # noqa: E402
from tests.fakemodel import FakeModelServer, hang, malformed, status  # noqa: E402

FAULTS = {
    "SOAK-500": status(500),
    "SOAK-429": status(429, retry_after=0.3),
    "SOAK-BAD": malformed(),
    "SOAK-HANG": hang(30),
}
TRIES = 3


class Tally:
    """Thread-safe counters of the run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.submitted = self.results = self.lost = self.twice = self.fallbacks = 0
        self.resubmitted = 0
        self.reasons: Counter[str] = Counter()
        self.max_closed = 0.0


def job(
    rt: argparse.Namespace, producer: Producer, tally: Tally, n: int, rng: random.Random
) -> None:
    """One logical job: submit, wait, resubmit while it has not come back."""
    marker = rng.choice([*FAULTS, *[""] * 12])
    output = f"{marker}\n" + "\n".join(f"step {n}.{i}: compiled unit_{i}" for i in range(120))
    output += f"\nerror: unit_{n} failed to link\n"
    session = f"soak-{n % rt.sessions}"
    with tally.lock:
        tally.submitted += 1
    for attempt in range(TRIES):
        try:
            handle = producer.submit(session_id=session, tool_name="bash", output=output)
            result = handle.wait(rt.job_timeout)
        except TersifyError:
            with tally.lock:
                tally.resubmitted += attempt < TRIES - 1
            time.sleep(0.5)
            continue
        applied = producer._redis.llen(keys.result(handle.job_id))
        with tally.lock:
            tally.results += 1
            tally.twice += applied > 1
            tally.fallbacks += result.method is Method.FALLBACK
            if result.fallback_reason is not None:
                tally.reasons[result.fallback_reason.value] += 1
        return
    with tally.lock:
        tally.lost += 1


def watch_gates(
    rt: argparse.Namespace, producer: Producer, tally: Tally, stop: threading.Event
) -> None:
    """Sample every session's gate; keep the longest closure seen."""
    closed_since: dict[str, float] = {}
    while not stop.wait(0.1):
        for s in range(rt.sessions):
            sid = f"soak-{s}"
            try:
                is_open = producer.gate.is_open(sid)
            except TersifyError:
                continue
            now = time.monotonic()
            if is_open:
                start = closed_since.pop(sid, None)
                if start is not None:
                    with tally.lock:
                        tally.max_closed = max(tally.max_closed, now - start)
            else:
                closed_since.setdefault(sid, now)


class RedisUnderTest:
    """The soak's Redis in its mode: where it is, and the one fault it suffers."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.group = SentinelGroup(appendonly=True) if mode == "sentinel" else None
        self.server = LocalRedis(appendonly=mode == "persist") if self.group is None else None

    def __enter__(self) -> RedisUnderTest:
        if self.group is not None:
            self.group.__enter__()
        elif self.server is not None:
            self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.group is not None:
            self.group.cleanup()
        elif self.server is not None:
            self.server.cleanup()

    @property
    def url(self) -> str:
        """``TERSIFY_REDIS_URL``."""
        if self.group is not None:
            return self.group.url
        assert self.server is not None
        return self.server.url

    def fail(self) -> str:
        """Inflict the mode's fault; describe it."""
        if self.group is not None:
            self.group.kill_primary()
            return "killed the Sentinel primary (the replica takes over)"
        assert self.server is not None
        self.server.restart()
        if self.mode == "persist":
            return "killed redis, restarted it from its AOF"
        return "killed redis, restarted it empty (no persistence)"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The soak's options."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=8.0, help="jobs submitted per second")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--job-timeout", type=float, default=45.0)
    parser.add_argument("--seed", type=int, default=1)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--persist", dest="mode", action="store_const", const="persist")
    mode.add_argument("--sentinel", dest="mode", action="store_const", const="sentinel")
    parser.set_defaults(mode="restart")
    return parser.parse_args(argv)


def run_load(
    rt: argparse.Namespace,
    redis_: RedisUnderTest,
    settings: Settings,
    spawn: Callable[[], WorkerProcess],
    tally: Tally,
) -> list[str]:
    """Submit at the steady rate for the run's length, with the worker kills and Redis' fault."""
    rng = random.Random(rt.seed)
    duration = rt.minutes * 60
    events: list[str] = []
    workers = [spawn() for _ in range(rt.workers)]
    stop = threading.Event()
    with Producer(settings) as producer, ThreadPoolExecutor(max_workers=256) as pool:
        watcher = threading.Thread(target=watch_gates, args=(rt, producer, tally, stop))
        watcher.start()
        started = time.monotonic()
        kills = [started + duration * q for q in (0.25, 0.5, 0.75)]
        fault_at = started + duration * 0.6
        n = 0
        while (now := time.monotonic()) < started + duration:
            if kills and now >= kills[0]:
                kills.pop(0)
                victim = rng.randrange(len(workers))
                workers[victim].kill()
                workers[victim] = spawn()
                events.append(f"{now - started:.0f}s: killed worker {victim}")
            if fault_at and now >= fault_at:
                events.append(f"{now - started:.0f}s: {redis_.fail()}")
                fault_at = 0.0
            pool.submit(job, rt, producer, tally, n, random.Random(rt.seed * 100_003 + n))
            n += 1
            time.sleep(max(0.0, started + n / rt.rate - time.monotonic()))
        pool.shutdown(wait=True)
        stop.set()
        watcher.join()
    for worker in workers:
        worker.stop()
    return events


def main(argv: list[str] | None = None) -> int:
    """Run the soak and print its summary line."""
    rt = parse_args(argv)
    tally = Tally()
    with (
        RedisUnderTest(rt.mode) as redis_,
        FakeModelServer(latency=rt.latency_ms / 1000) as fake,
        TemporaryDirectory(prefix="tersify-soak-") as tmp,
    ):
        for marker, behaviour in FAULTS.items():
            fake.add_rule(marker, behaviour)
        workdir = Path(tmp)
        settings = Settings(
            redis_url=redis_.url,
            session_log_dir=workdir / "sessions",
            gate_lease_seconds=3,
            visibility_timeout_seconds=8,
        )
        env = {
            "summary_provider": "openai",
            "openai_base_url": fake.openai_base_url,
            "openai_api_key": "soak-key",
            "model_timeout_seconds": "2",
            "gate_lease_seconds": "3",
            "gate_sweep_interval_seconds": "0.5",
            "visibility_timeout_seconds": "8",
            "session_log_dir": str(workdir / "sessions"),
        }
        events = run_load(
            rt, redis_, settings, lambda: WorkerProcess(settings, workdir, **env).start(), tally
        )
    report(rt.mode, tally, events)
    return 0 if tally.lost == 0 and tally.twice == 0 else 1


def report(mode: str, tally: Tally, events: list[str]) -> None:
    """Print the events, the table and the summary line."""
    rate = tally.fallbacks / tally.results if tally.results else 0.0
    fault = {
        "restart": "redis restart (no persistence)",
        "persist": "redis killed, restarted from AOF",
        "sentinel": "Sentinel primary killed, fail-over",
    }[mode]
    print("events:", "; ".join(events))
    print(f"resubmitted after a lost message: {tally.resubmitted}")
    print("fallback reasons:", dict(tally.reasons.most_common()))
    print("| fault | expected | observed |\n|---|---|---|")
    faults = "model 500/429/malformed/hang on ~25%"
    print(f"| {faults} | fallback, never an error | fallback rate {rate:.3f} |")
    print(f"| worker SIGKILL ×3 | jobs redelivered or swept | lost {tally.lost} |")
    print(f"| {fault} ×1 | waiters resubmit, gates open | lost {tally.lost} |")
    print(f"| any | applied once | applied twice {tally.twice} |")
    print(f"| any | gate closed ≤ cap (35 s) | longest {tally.max_closed:.1f}s |")
    print(
        f"soak: submitted={tally.submitted} results={tally.results} lost={tally.lost} "
        f"applied_twice={tally.twice} resubmitted={tally.resubmitted} "
        f"max_gate_closed_s={tally.max_closed:.1f} fallback_rate={rate:.3f}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
