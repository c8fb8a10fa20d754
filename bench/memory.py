"""Worker memory with many large jobs in flight at once.

One worker with ``--concurrency`` slots (default 500, threads) takes ``--inflight`` jobs of
``--chars`` characters (default 500 × 50 KB) while the fake model holds every call for
``--latency-ms``; when the fake has seen all the calls arrive (every job is inside its model
call), the worker's process-group RSS is sampled for a second and the peak reported, beside the
idle RSS before the load. With ``--tracemalloc N`` the worker runs under ``tracemalloc`` and,
at the peak, lists the ``N`` source lines holding the most memory (per job in flight too):
where the memory went (tracing slows the worker and inflates its RSS; the figures to compare
are the ones without it). Run: ``.venv/bin/python bench/memory.py --help``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path
from tempfile import TemporaryDirectory

from _harness import start_tersify_worker, tool_output

from tersify.client import Producer
from tersify.settings import Settings
from tersify.worker.processes.redis_server import LocalRedis
from tests.fakemodel import FakeModelServer

MB = 1024 * 1024
# Loaded by the worker's interpreter (``sitecustomize``) under --tracemalloc: it traces every
# allocation and writes a snapshot when the benchmark asks (a file appears), from a thread.
HOOK = """
import os, threading, time, tracemalloc
DIR = os.environ["TERSIFY_BENCH_TRACE_DIR"]
tracemalloc.start(4)
def _watch():
    while True:
        time.sleep(0.2)
        if os.path.exists(os.path.join(DIR, "dump")):
            tracemalloc.take_snapshot().dump(os.path.join(DIR, "snapshot.part"))
            os.replace(os.path.join(DIR, "snapshot.part"), os.path.join(DIR, "snapshot"))
            return
threading.Thread(target=_watch, daemon=True).start()
"""


def _short(path: str) -> str:
    """A traced file's name from its package on (``worker/…``, ``httpcore/…``)."""
    if "site-packages/" in path:
        return path.rsplit("site-packages/", 1)[1]
    for package in ("worker", "producer"):
        if f"/{package}/" in path:
            return package + "/" + path.rsplit(f"/{package}/", 1)[1]
    return path


def trace_worker(directory: Path) -> None:
    """Make the next worker started from here trace its allocations (see ``HOOK``)."""
    (directory / "sitecustomize.py").write_text(HOOK)
    # the worker inherits this process's environment; nothing here reads configuration from it
    os.environ["PYTHONPATH"] = str(directory)  # noqa: TID251
    os.environ["TERSIFY_BENCH_TRACE_DIR"] = str(directory)  # noqa: TID251


def where(directory: Path, lines: int, inflight: int, max_seconds: float) -> list[str]:
    """Ask the traced worker for a snapshot; the ``lines`` source lines holding the most."""
    (directory / "dump").touch()
    snapshot = directory / "snapshot"
    deadline = time.monotonic() + max_seconds
    while not snapshot.exists():
        if time.monotonic() > deadline:
            raise TimeoutError("the worker wrote no tracemalloc snapshot")
        time.sleep(0.2)
    # code loaded at start-up is no job's memory
    loading = tracemalloc.Filter(False, "<frozen importlib.*")
    stats = tracemalloc.Snapshot.load(str(snapshot)).filter_traces([loading]).statistics("lineno")
    shown = []
    for stat in stats[:lines]:
        frame = stat.traceback[0]
        place = f"{_short(frame.filename)}:{frame.lineno}"
        per_job = stat.size / max(1, inflight) / 1024
        shown.append(f"{stat.size / MB:8.2f} MB {per_job:7.1f} KiB/job  {place}")
    return shown


def main(argv: list[str] | None = None) -> int:
    """Load the worker, sample its memory, print one summary line."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--inflight", type=int, default=500)
    p.add_argument("--chars", type=int, default=50_000)
    p.add_argument("--pool", default="threads")
    p.add_argument("--concurrency", type=int, default=None, help="default: --inflight")
    p.add_argument("--latency-ms", type=float, default=60_000.0, help="long: calls stay open")
    p.add_argument("--launcher", choices=("tersify", "celery"), default="tersify")
    p.add_argument("--celery-arg", action="append", default=[], help="with --launcher celery")
    p.add_argument("--max-seconds", type=float, default=120.0)
    p.add_argument("--tracemalloc", type=int, default=0, metavar="N", help="list N top lines")
    args = p.parse_args(argv)
    concurrency = args.concurrency or args.inflight
    # Every call must stay open while sampled: no deadline or gate cap may end a job first.
    hold = args.latency_ms / 1000 + 60
    long_jobs = {
        "job_deadline_seconds": hold,
        "gate_lease_seconds": hold,
        "gate_max_seconds": hold + 30,
    }
    with (
        TemporaryDirectory(prefix="tersify-bench-") as tmp,
        LocalRedis() as server,
        FakeModelServer(latency=args.latency_ms / 1000) as fake,
    ):
        if args.tracemalloc:
            trace_worker(Path(tmp))
        worker = start_tersify_worker(
            server.url,
            fake.openai_base_url,
            args.pool,
            concurrency,
            Path(tmp),
            args.launcher,
            tuple(args.celery_arg),
            args.max_seconds if args.tracemalloc else 30.0,
            model_timeout_seconds=str(args.latency_ms / 1000 + 30),
            **{name: str(value) for name, value in long_jobs.items()},
        )
        try:
            time.sleep(1.0)  # let start-up settle before the idle sample
            idle = worker.rss_bytes()
            deadline = time.monotonic() + args.max_seconds
            with Producer(Settings(redis_url=server.url, **long_jobs)) as producer:
                handles = [
                    producer.submit(
                        session_id=f"mem-{i}", tool_name="grep", output=tool_output(i, args.chars)
                    )
                    for i in range(args.inflight)
                ]
                while fake.request_count < args.inflight and time.monotonic() < deadline:
                    time.sleep(0.05)
                peak = 0
                for _ in range(10):  # every call is open now: sample over a second
                    peak = max(peak, worker.rss_bytes())
                    time.sleep(0.1)
                # calls that arrived minus jobs already finished: what was open while sampled
                inflight = fake.request_count - sum(h.done for h in handles)
                if args.tracemalloc:
                    top = where(Path(tmp), args.tracemalloc, inflight, args.max_seconds)
        finally:
            worker.stop(timeout=5.0)
    if args.tracemalloc:
        print("\n".join(top))
    print(f"idle rss {idle / MB:.1f} MB; {inflight} calls open at once; peak {peak / MB:.1f} MB")
    print(
        f"memory: inflight={inflight} rss_mb={peak / MB:.1f} idle_rss_mb={idle / MB:.1f} "
        f"chars={args.chars} pool={args.pool} concurrency={concurrency}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
