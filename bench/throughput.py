"""Jobs per second end to end: tersify beside bare Celery, arq and Dramatiq doing the same call.

Each system runs ``--jobs`` jobs against the same private redis-server and the same fake model
(fixed ``--latency-ms``); each job is one model call on a ~4 KB tool output. tersify's time runs
from the first ``submit`` to the last result read by ``Producer.wait``; the peers count finished
jobs in Redis. CPU per job is the worker process group's CPU time over the run divided by jobs.
arq and Dramatiq run in their own interpreter (``--peer-python``, default ``.venv-peers``, which
is created on first use from the pins in ``bench/peers/env.py``; with ``--no-peer-install`` and
no env they are reported as ``skipped``). Run: ``.venv/bin/python bench/throughput.py --help``.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

from _harness import (
    ROOT,
    FakeModelProcess,
    Proc,
    burst,
    machine_cpu_seconds,
    start_tersify_worker,
    tool_output,
)
from celery import Celery
from peers.env import ensure_peer_python, peer_python_path

from tersify.client import Producer
from tersify.contract import Method
from tersify.settings import Settings
from tersify.worker.processes.redis_server import LocalRedis

SYSTEMS = ("tersify", "celery_bare", "arq", "dramatiq")
# A 2,000-job burst outlasts the interactive deadline (30 s) and gate lease (15 s) at any rate
# under ~130 jobs/s, and the shipped settings then shed the rest as fast fallbacks: that is the
# overload behaviour, not capacity. Capacity runs lift both (``--shipped-deadlines`` keeps them).
CAPACITY_SETTINGS = {
    "job_deadline_seconds": "900",
    "gate_lease_seconds": "900",
    "gate_max_seconds": "960",
}
CORES = os.cpu_count() or 1
DONE_KEY = "bench:done"
START_KEY = "bench:start"


@dataclass
class Run:
    """One system's outcome."""

    jobs: int
    seconds: float
    cpu_seconds: float
    machine_cpu_seconds: float
    note: str = ""

    @property
    def rate(self) -> float:
        """Jobs per second."""
        return self.jobs / self.seconds

    @property
    def cpu_ms(self) -> float:
        """Worker CPU milliseconds per job."""
        return self.cpu_seconds * 1e3 / self.jobs

    @property
    def machine_cpu_ms(self) -> float:
        """Whole-machine CPU milliseconds per job: workers, producer, Redis, fake model, all."""
        return self.machine_cpu_seconds * 1e3 / self.jobs


def _measured(workers: list[Proc], body: Callable[[], tuple[int, float, str]]) -> Run:
    """Run ``body`` (returns jobs done, seconds, note) and charge the workers' CPU to it."""
    try:
        cpu0, all0 = sum(w.cpu_seconds() for w in workers), machine_cpu_seconds()
        done, seconds, note = body()
        cpu1, all1 = sum(w.cpu_seconds() for w in workers), machine_cpu_seconds()
    finally:
        for worker in workers:
            worker.stop()
    return Run(done, seconds, cpu1 - cpu0, all1 - all0, note)


def run_tersify(args: argparse.Namespace, url: str, fake: FakeModelProcess, logs: Path) -> Run:
    """tersify's real path: submit (gate, payload, publish) → worker → stored result."""
    lifted = {} if args.shipped_deadlines else CAPACITY_SETTINGS
    env = lifted | dict(kv.split("=", 1) for kv in args.worker_env)
    workers = [
        start_tersify_worker(
            url,
            fake.openai_base_url,
            args.pool,
            args.concurrency,
            logs,
            args.launcher,
            tuple(args.celery_arg),
            args.start_seconds,
            **env,
        )
        for _ in range(args.processes)
    ]
    outputs = [tool_output(i, args.chars) for i in range(args.jobs)]

    def body() -> tuple[int, float, str]:
        with Producer(Settings(redis_url=url, **lifted)) as producer:  # type: ignore[arg-type]
            results, elapsed = burst(producer, outputs, args.max_seconds)
        fallbacks = Counter(
            f"{r.method}:{r.fallback_reason}" for r in results if r.method is not Method.LLM
        )
        return args.jobs, elapsed, f"not_llm={sum(fallbacks.values())} {dict(fallbacks)}"

    return _measured(workers, body)


def _count_done(
    url: str, jobs: int, max_seconds: float, send: Callable[[], None]
) -> tuple[int, float, str]:
    """Start ``send`` (which marks START_KEY), poll DONE_KEY until ``jobs``; return the run."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        deadline = time.monotonic() + max_seconds
        done = 0
        while done < jobs and time.monotonic() < deadline:
            time.sleep(0.002)
            done = int(client.get(DONE_KEY) or 0)
        end = time.time()
        sender.join(30)
        started = float(client.get(START_KEY) or end)
        note = "" if done >= jobs else f"timeout_after={done}"
        return max(done, 1), end - started, note
    finally:
        client.close()


def run_bare(args: argparse.Namespace, url: str, fake: FakeModelProcess, logs: Path) -> Run:
    """A bare Celery task making the same call, same pool and concurrency unless overridden."""
    import redis

    pool = args.bare_pool or args.pool
    concurrency = args.bare_concurrency or args.concurrency
    env = Settings().child_env(redis_url=url, openai_base_url=fake.openai_base_url)
    client = redis.Redis.from_url(url)
    workers = []
    for n in range(args.processes):
        argv = [sys.executable, "-m", "celery", "-A", "bench.peers.celery_bare", "worker"]
        argv += ["--pool", pool, "--concurrency", str(concurrency), "-n", f"bare{n}@localhost"]
        argv += ["--without-mingle", "--without-gossip", "--loglevel", "WARNING"]
        client.delete("bench:ready:celery_bare")
        worker = Proc(f"bare{n}", argv, env, logs)
        worker.wait_until(
            lambda: client.exists("bench:ready:celery_bare"),
            "bare Celery start",
            args.start_seconds,
        )
        workers.append(worker)
    client.close()
    outputs = [tool_output(i, args.chars) for i in range(args.jobs)]
    app = Celery("bench-bare-producer", broker=url, set_as_current=False)
    app.conf.update(task_serializer="json", task_ignore_result=True)

    def send() -> None:
        marker = redis.Redis.from_url(url)
        marker.set(START_KEY, repr(time.time()))
        marker.close()
        for text in outputs:
            app.send_task("bench.bare_call", args=[text])

    try:
        return _measured(workers, lambda: _count_done(url, args.jobs, args.max_seconds, send))
    finally:
        app.close()


def run_peer(
    name: str, args: argparse.Namespace, url: str, fake: FakeModelProcess, logs: Path
) -> Run:
    """arq or Dramatiq in the peer interpreter: worker processes, then a producer process."""
    import redis

    script = str(ROOT / "bench" / "peers" / f"{name}_peer.py")
    slots = args.arq_slots if name == "arq" else args.dramatiq_slots
    py = args.peer_python
    env = Settings().child_env()
    argv = [py, script, "worker", url, fake.openai_base_url, str(slots)]
    argv.append(args.dramatiq_pool if name == "dramatiq" else str(args.arq_poll_delay))
    workers = []
    client = redis.Redis.from_url(url)
    try:
        for n in range(args.peer_processes):
            client.delete(f"bench:ready:{name}")
            worker = Proc(f"{name}{n}", argv, env, logs)
            worker.wait_until(
                lambda: client.exists(f"bench:ready:{name}"), f"{name} start", args.start_seconds
            )
            workers.append(worker)
    finally:
        client.close()

    def send() -> None:
        argv = [py, script, "produce", url, fake.openai_base_url, str(args.jobs), str(args.chars)]
        producer = Proc(f"{name}-producer", argv, env, logs)
        producer.proc.wait(timeout=args.max_seconds)

    return _measured(workers, lambda: _count_done(url, args.jobs, args.max_seconds, send))


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    defaults = Settings()
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--latency-ms", type=float, default=200.0, help="fake model latency")
    p.add_argument("--jobs", type=int, default=2000)
    p.add_argument("--chars", type=int, default=4000, help="tool output size per job")
    p.add_argument("--pool", default=defaults.worker_pool, help="tersify (and bare) pool")
    p.add_argument("--concurrency", type=int, default=defaults.worker_concurrency)
    p.add_argument(
        "--launcher", choices=("tersify", "celery"), default="tersify", help="see _harness.py"
    )
    p.add_argument(
        "--celery-arg", action="append", default=[], help="extra worker option (launcher celery)"
    )
    p.add_argument("--processes", type=int, default=1, help="worker processes (tersify, bare)")
    p.add_argument("--bare-pool", default=None, help="bare Celery's pool (default: --pool)")
    p.add_argument("--bare-concurrency", type=int, default=None)
    p.add_argument("--shipped-deadlines", action="store_true", help="see CAPACITY_SETTINGS")
    p.add_argument("--worker-env", action="append", default=[], help="KEY=VALUE Settings field")
    p.add_argument(
        "--peer-python",
        default=None,
        help=f"interpreter with arq, dramatiq, gevent (default: {peer_python_path(ROOT)})",
    )
    p.add_argument(
        "--no-peer-install", action="store_true", help="skip the peers if their env is missing"
    )
    p.add_argument("--arq-slots", type=int, default=200, help="arq max_jobs")
    p.add_argument("--arq-poll-delay", type=float, default=0.01, help="arq poll_delay, seconds")
    p.add_argument("--dramatiq-slots", type=int, default=200, help="Dramatiq threads")
    p.add_argument("--dramatiq-pool", choices=("threads", "gevent"), default="threads")
    p.add_argument("--peer-processes", type=int, default=1, help="arq and Dramatiq workers")
    p.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated subset")
    p.add_argument("--max-seconds", type=float, default=300.0, help="budget per system and round")
    p.add_argument(
        "--start-seconds", type=float, default=30.0, help="a worker's start-up (512 slots: more)"
    )
    p.add_argument("--rounds", type=int, default=1, help="runs per system, interleaved; median")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run every selected system ``--rounds`` times, interleaved; print one summary line."""
    args = parse(argv)
    chosen = [name for name in SYSTEMS if name in args.systems.split(",")]
    if {"arq", "dramatiq"} & set(chosen):
        args.peer_python = peer_python(args)
    if not args.peer_python:
        chosen = [name for name in chosen if name not in ("arq", "dramatiq")]
    rounds: dict[str, list[Run]] = {name: [] for name in chosen}
    with TemporaryDirectory(prefix="tersify-bench-") as tmp, LocalRedis() as server:
        logs = Path(tmp)
        with FakeModelProcess(args.latency_ms, logs) as fake:
            # Interleaved (A B C D, A B C D, …): a shared machine's slow minute hits every
            # system alike, and the median of each system's rounds is reported.
            for number in range(1, args.rounds + 1):
                for name in chosen:
                    _flush(server.url)
                    if name == "tersify":
                        run = run_tersify(args, server.url, fake, logs)
                    elif name == "celery_bare":
                        run = run_bare(args, server.url, fake, logs)
                    else:
                        run = run_peer(name, args, server.url, fake, logs)
                    rounds[name].append(run)
                    print(f"round {number} {name}: {describe(run)}", flush=True)
    runs: dict[str, Run | str] = dict.fromkeys(SYSTEMS, "skipped")
    runs |= {name: median_run(done) for name, done in rounds.items()}
    print(summary(runs, args))
    return 0


def describe(run: Run) -> str:
    """One run in words: rate, worker CPU, and how busy the whole machine was."""
    busy = run.machine_cpu_ms * run.rate / 10 / CORES  # percent of all cores
    return (
        f"{run.jobs} jobs in {run.seconds:.2f} s = {run.rate:.1f}/s, worker cpu "
        f"{run.cpu_ms:.2f} ms/job, machine cpu {run.machine_cpu_ms:.2f} ms/job "
        f"({busy:.0f}% of {CORES} cores) {run.note}"
    )


def median_run(runs: list[Run]) -> Run:
    """The run with the median rate (the lower middle one for an even count)."""
    return sorted(runs, key=lambda run: run.rate)[(len(runs) - 1) // 2]


def peer_python(args: argparse.Namespace) -> str | None:
    """``--peer-python`` as given, else the ``.venv-peers`` interpreter (made if allowed)."""
    if args.peer_python:
        if not Path(args.peer_python).exists():
            raise SystemExit(f"--peer-python {args.peer_python} does not exist")
        return str(args.peer_python)
    try:
        return ensure_peer_python(ROOT, install=not args.no_peer_install)
    except RuntimeError as exc:
        # No PyPI, say: tersify and bare Celery still measure; the peers say why they are missing.
        print(f"peers skipped, their env could not be made: {exc}", file=sys.stderr, flush=True)
        return None


def _flush(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    client.flushall()
    client.close()


def summary(runs: dict[str, Run | str], args: argparse.Namespace) -> str:
    """The machine-readable last line."""

    def rate(name: str) -> str:
        run = runs[name]
        return run if isinstance(run, str) else f"{run.rate:.1f}/s"

    def ratio(name: str) -> str:
        ours, theirs = runs["tersify"], runs[name]
        if isinstance(ours, str) or isinstance(theirs, str):
            return "skipped"
        return f"{ours.rate / theirs.rate:.2f}"

    def cpu(name: str) -> str:
        run = runs[name]
        return run if isinstance(run, str) else f"{run.cpu_ms:.2f}"

    return (
        f"throughput: tersify={rate('tersify')} celery_bare={rate('celery_bare')} "
        f"arq={rate('arq')} dramatiq={rate('dramatiq')} ratio={ratio('celery_bare')} "
        f"arq_ratio={ratio('arq')} dramatiq_ratio={ratio('dramatiq')} "
        f"cpu_ms_per_job={cpu('tersify')} bare_cpu_ms={cpu('celery_bare')} "
        f"arq_cpu_ms={cpu('arq')} dramatiq_cpu_ms={cpu('dramatiq')} "
        f"pool={args.pool} concurrency={args.concurrency} processes={args.processes} "
        f"peer_processes={args.peer_processes} "
        f"latency_ms={args.latency_ms:g} jobs={args.jobs} rounds={args.rounds}"
    )


if __name__ == "__main__":
    sys.exit(main())
