"""Worker memory with many large jobs in flight at once.

One worker with ``--concurrency`` slots (default 500, threads) takes ``--inflight`` jobs of
``--chars`` characters (default 500 × 50 KB) while the fake model holds every call for
``--latency-ms``; when the fake has seen all the calls arrive (every job is inside its model
call), the worker's process-group RSS is sampled for a second and the peak reported, beside the
idle RSS before the load. Run: ``.venv/bin/python bench/memory.py --help``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from _harness import start_tersify_worker, tool_output

from tersify.client import Producer
from tersify.settings import Settings
from tersify.worker.processes.redis_server import LocalRedis
from tests.fakemodel import FakeModelServer

MB = 1024 * 1024


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
        worker = start_tersify_worker(
            server.url,
            fake.openai_base_url,
            args.pool,
            concurrency,
            Path(tmp),
            args.launcher,
            tuple(args.celery_arg),
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
        finally:
            worker.stop(timeout=5.0)
    print(f"idle rss {idle / MB:.1f} MB; {inflight} calls open at once; peak {peak / MB:.1f} MB")
    print(
        f"memory: inflight={inflight} rss_mb={peak / MB:.1f} idle_rss_mb={idle / MB:.1f} "
        f"chars={args.chars} pool={args.pool} concurrency={concurrency}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
