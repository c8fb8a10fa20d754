"""Shared pieces of the benchmarks: worker processes, /proc accounting, payloads, percentiles.

Every benchmark owns its private redis-server (``LocalRedis``) and fake model; this module
starts and stops the worker processes that run against them and measures their CPU and memory
from ``/proc`` (Linux only), summed over the worker's whole process group so prefork children
count too. The fake model runs in a process of its own (``FakeModelProcess``), so it never
shares a GIL with the producer that drives the load; only ``memory.py`` keeps it in-process,
for its request count.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from tersify.client import Producer, SummaryHandle
from tersify.contract import SummaryResult
from tersify.settings import Settings
from tersify.worker.processes.group import GroupProcess
from tersify.worker.processes.redis_server import free_port
from tersify.worker.processes.worker_process import CELERY_WORKER, TERSIFY_WORKER, WorkerProcess

# Scripts run as ``python bench/x.py``: put the repository root on the path for ``tests``.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# SIGTERM unwinds like Ctrl-C, so the ``finally`` blocks stop workers and redis-server.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
LINE = "{path}:{line}: result = compute_{name}(value_{n}, options={{'mode': 'fast', 'id': {n}}})"


def tool_output(index: int, chars: int = 4000) -> str:
    """A grep-like tool output of about ``chars`` characters, unique per ``index``."""
    lines: list[str] = []
    total = 0
    n = 0
    while total < chars:
        path = f"src/pkg_{index}/module_{n % 17}.py"
        line = LINE.format(path=path, line=n * 7 + 1, name=f"{index}_{n}", n=n)
        lines.append(line)
        total += len(line) + 1
        n += 1
    return "\n".join(lines)[:chars]


def burst(
    producer: Producer, outputs: Sequence[str], max_seconds: float, session_prefix: str = "bench"
) -> tuple[list[SummaryResult], float]:
    """Submit ``outputs`` from one thread while this one waits for each result, in order.

    Returns the results and the seconds from the first submit to the last result. Sessions
    rotate over 64 ids (``PREFIX-0`` …), so gates close and open as under many agents.
    """
    handles: list[SummaryHandle] = []

    def submit_all() -> None:
        for i, text in enumerate(outputs):
            handles.append(
                producer.submit(
                    session_id=f"{session_prefix}-{i % 64}", tool_name="grep", output=text
                )
            )

    deadline = time.monotonic() + max_seconds
    started = time.perf_counter()
    submitter = threading.Thread(target=submit_all, daemon=True)
    submitter.start()
    results = []
    for i in range(len(outputs)):
        while len(handles) <= i:  # the submitter is ahead almost always
            if time.monotonic() > deadline:
                raise TimeoutError("submitting took longer than --max-seconds")
            time.sleep(0.001)
        results.append(handles[i].wait(timeout=max(0.1, deadline - time.monotonic())))
    elapsed = time.perf_counter() - started
    submitter.join(10)
    return results, elapsed


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def machine_cpu_seconds() -> float:
    """CPU time spent by the whole machine so far (every core; idle and I/O wait excluded)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def _group_stats(pgid: int) -> tuple[float, int]:
    """(CPU seconds, RSS bytes) summed over the live processes of one process group."""
    cpu = 0.0
    rss = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            raw = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # the process exited while we looked
        # The command name may hold spaces and parentheses: split after the last ')'.
        fields = raw[raw.rindex(")") + 2 :].split()
        if int(fields[2]) != pgid:
            continue
        cpu += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        rss += int(fields[21]) * PAGE_BYTES
    return cpu, rss


class _Accounted:
    """CPU and memory of a process's whole group, from ``/proc``."""

    pid: int

    def cpu_seconds(self) -> float:
        """CPU time (user + system) used so far by the process group."""
        return _group_stats(self.pid)[0]

    def rss_bytes(self) -> int:
        """Resident memory of the process group right now."""
        return _group_stats(self.pid)[1]


class Proc(_Accounted, GroupProcess):
    """A benchmark process (peer, load generator, fake model), started at once."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log_dir: Path) -> None:
        super().__init__(args, env=env, log_path=log_dir / f"{name}.log", cwd=ROOT)
        self.start()


class BenchWorker(_Accounted, WorkerProcess):
    """A tersify worker whose CPU and memory the benchmark reads."""


def start_tersify_worker(
    redis_url: str,
    model_url: str,
    pool: str,
    concurrency: int,
    log_dir: Path,
    launcher: str = "tersify",
    celery_args: tuple[str, ...] = (),
    start_timeout: float = 30.0,
    **env: str,
) -> BenchWorker:
    """A real tersify worker summarizing through the fake OpenAI endpoint; waits for it.

    ``launcher="tersify"`` runs ``tersify worker`` (what ships); ``"celery"`` runs the same app
    through ``python -m celery``, whose entry point monkey-patches for ``--pool gevent`` first,
    and takes ``celery_args`` (e.g. ``--prefetch-multiplier 4``) to try Celery settings.
    """
    settings = {
        "summary_provider": "openai",
        "openai_base_url": model_url,
        "openai_api_key": "k",
        # The shipped log level (INFO: one JSON line per job), as a production worker runs.
        "log_format": "json",
        "session_log_dir": str(log_dir / "sessions"),
        # Celery reads an explicit ``--pool prefork`` as "no choice" and keeps the app's
        # configured pool (threads): the configured pool must say it too.
        "worker_pool": pool,
        # The model-client pool is sized from Settings, not from ``--concurrency``: keep them equal.
        "worker_concurrency": str(concurrency),
    }
    worker = BenchWorker(
        Settings(redis_url=redis_url),
        log_dir,
        hostname=f"bench-{uuid.uuid4().hex[:8]}@localhost",
        command=TERSIFY_WORKER if launcher == "tersify" else CELERY_WORKER,
        args=[*celery_args, "--pool", pool, "--concurrency", str(concurrency)],
        cwd=ROOT,
        **(settings | env),
    )
    return worker.start(start_timeout)


class FakeModelProcess:
    """The loopback fake model (``python -m tests.fakemodel``) in its own process group."""

    def __init__(self, latency_ms: float, log_dir: Path, start_timeout: float = 30.0) -> None:
        self.port = free_port()
        self._latency_ms = latency_ms
        self._log_dir = log_dir
        self._start_timeout = start_timeout
        self._proc: Proc | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """The base URL an OpenAI client takes (with ``/v1``)."""
        return self.url + "/v1"

    def __enter__(self) -> Self:
        args = [sys.executable, "-m", "tests.fakemodel", "--port", str(self.port)]
        args += ["--latency-ms", str(self._latency_ms)]
        env = Settings().child_env()
        proc = self._proc = Proc(f"fakemodel-{self.port}", args, env, self._log_dir)
        # Its own start line for this port, then a connection: never another process's port.
        proc.wait_until(lambda: self._serving(proc), "fake model start", self._start_timeout)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.stop()

    def _serving(self, proc: Proc) -> bool:
        if f"fake model server on {self.url}" not in proc.log_tail():
            return False
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1.0).close()
        except OSError:
            return False
        return True
