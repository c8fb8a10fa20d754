"""Long outputs read in windows: job latency, model requests and characters sent, per way.

``python bench/windows.py [--latency-ms 2000] [--sizes 1000000,4000000] [--runs 3]``

A real ``tersify worker`` (threads pool) summarizes through the fake model (its own process, a
fixed latency per request) outputs of each size — a service log with a few errors spread
through it — in three ways, each run on an output of its own (no cache hit):

- ``single``: one request, the engine's cut view of the output, as before windows
  (``model_read_max_chars`` = one window);
- ``windows``: the shipped way at the defaults — the windows side by side on threads of the
  job, then the merge;
- ``spread``: the same windows spread over the worker's slots through the broker, as a Celery
  group would: each window submitted as a job of its own, then a merge-sized job once all are
  in. No chord or result backend is involved, so this is the spread's best case.

Prints one line per way and size (``windows: size=… way=…``): the median job latency over the
runs, as a multiple of one model request's latency (timed alone first), the requests and the
characters sent, and the worker's CPU seconds per job.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from _harness import BenchWorker, FakeModelProcess, start_tersify_worker
from overhead import model_call_seconds

from tersify.client import Producer
from tersify.contract import JobOptions, ToolType
from tersify.settings import Settings
from tersify.worker.processes.redis_server import LocalRedis
from tersify.worker.shrink import Reading, plain_lines
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.windows import plan

WAYS = ("single", "windows", "spread")
QUERY = "why did requests fail"


def service_log(chars: int, seed: int) -> str:
    """A service log of about ``chars`` characters, a few errors spread through it."""
    rng = random.Random(seed)
    lines: list[str] = []
    total = 0
    n = 0
    while total < chars:
        n += 1
        if rng.random() < 0.0005:
            line = (
                f"2026-11-02T10:{n // 60 % 60:02d}:{n % 60:02d}Z ERROR api request_id=r{seed}-{n} "
                f"path=/v1/orders/{rng.randrange(10**6)} upstream=db-{rng.randrange(9)}:5432 "
                "error=connection refused"
            )
        else:
            line = (
                f"2026-11-02T10:{n // 60 % 60:02d}:{n % 60:02d}Z INFO api request_id=r{seed}-{n} "
                f"path=/v1/items/{rng.randrange(10**6)} status=200 ms={rng.randrange(3, 90)}"
            )
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def one_job(
    producer: Producer, text: str, session: str, read_max: int | None
) -> tuple[float, int, int]:
    """(seconds, requests answered, chars sent) of one job."""
    options = JobOptions(model_read_max_chars=read_max) if read_max else None
    started = time.perf_counter()
    handle = producer.submit(
        session_id=session, tool_name="bash", output=text, query=QUERY, options=options
    )
    result = handle.wait(timeout=120)
    seconds = time.perf_counter() - started
    sent = sum(w.chars for w in result.windows) or min(len(text), 50_000)
    return seconds, result.model_requests, sent


def spread_job(
    producer: Producer, text: str, session: str, settings: Settings
) -> tuple[float, int, int]:
    """The windows of ``text`` as jobs of their own through the broker, then a merge-sized job."""
    started = time.perf_counter()
    doc = Doc(text)
    source = plain_lines(doc.lines)
    reading = Reading.of(doc, ToolType.COMMAND_OUTPUT, QUERY)
    found = plan(
        source, reading, limit=settings.model_window_chars, ceiling=settings.model_read_max_chars
    )
    handles = [
        producer.submit(
            session_id=f"{session}-w{n}",
            tool_name="bash",
            output="\n".join(source.lines[i] for i in sorted(window.shown)),
            query=QUERY,
        )
        for n, window in enumerate(found.windows)
    ]
    answers = [handle.wait(timeout=120) for handle in handles]
    merge_input = "\n".join(a.text for a in answers) * 2  # the answers and their quoted lines
    producer.submit(
        session_id=f"{session}-merge", tool_name="bash", output=merge_input, query=QUERY
    ).wait(timeout=120)
    seconds = time.perf_counter() - started
    return seconds, len(answers) + 1, found.chars_sent


def main(argv: list[str] | None = None) -> int:
    """Run every way on every size; print one line each."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--latency-ms", type=float, default=2000.0)
    p.add_argument("--sizes", default="1000000,4000000")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=Settings().worker_concurrency)
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    defaults = Settings()
    with (
        TemporaryDirectory(prefix="tersify-bench-") as tmp,
        LocalRedis() as server,
        FakeModelProcess(args.latency_ms, Path(tmp)) as fake,
    ):
        one = statistics.median(model_call_seconds(fake, service_log(50_000, 0), 3))
        print(f"one model request: {one:.3f} s (fake latency {args.latency_ms:.0f} ms)")
        worker: BenchWorker = start_tersify_worker(
            server.url, fake.openai_base_url, "threads", args.concurrency, Path(tmp)
        )
        seed = 1
        try:
            with Producer(Settings(redis_url=server.url)) as producer:
                for size in sizes:
                    for way in WAYS:
                        rows = []
                        cpu_before = worker.cpu_seconds()
                        for run in range(args.runs):
                            seed += 1
                            text = service_log(size, seed)
                            session = f"windows-{way}-{size}-{run}"
                            if way == "spread":
                                rows.append(spread_job(producer, text, session, defaults))
                            else:
                                read_max = defaults.model_window_chars if way == "single" else None
                                rows.append(one_job(producer, text, session, read_max))
                        cpu = (worker.cpu_seconds() - cpu_before) / args.runs
                        seconds = statistics.median(r[0] for r in rows)
                        print(
                            f"windows: size={size} way={way} latency_s={seconds:.2f} "
                            f"x_one_request={seconds / one:.2f} requests={rows[0][1]} "
                            f"chars_sent={rows[0][2]} worker_cpu_s_per_job={cpu:.2f}",
                            flush=True,
                        )
        finally:
            worker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
