"""The benchmarks still run: each script in a tiny mode, checked for its summary line only.

Timings are not asserted here (they live in docs/PERFORMANCE.md); each script starts its own
redis-server, fake model and worker, so this needs redis-server on PATH. The throughput run
measures tersify and bare Celery only; the arq and Dramatiq peers are left to the benchmark runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCRIPT_TIMEOUT_SECONDS = 240  # a tiny run, sized for two suites side by side on two cores

TINY_RUNS = [
    (
        "throughput.py",
        # tersify and bare Celery: the arq and Dramatiq peers need an env of their own (`make
        # bench-peers`, a minute to build), which the smoke run leaves to the benchmark runs
        [
            *("--jobs", "6", "--latency-ms", "20", "--concurrency", "4", "--max-seconds", "30"),
            *("--systems", "tersify,celery_bare"),
        ],
        "throughput:",
        {"tersify", "celery_bare", "ratio", "cpu_ms_per_job"},
        SCRIPT_TIMEOUT_SECONDS,
    ),
    (
        "overhead.py",
        ["--jobs", "6", "--latency-ms", "20", "--concurrency", "4", "--max-seconds", "30"],
        "overhead:",
        {"p50_ms", "p99_ms", "gate_notify_p99_ms"},
        SCRIPT_TIMEOUT_SECONDS,
    ),
    (
        "memory.py",
        ["--inflight", "4", "--chars", "3000", "--latency-ms", "3000", "--max-seconds", "30"],
        "memory:",
        {"inflight", "rss_mb"},
        SCRIPT_TIMEOUT_SECONDS,
    ),
    (
        "redis_cost.py",
        ["--jobs", "10", "--sessions", "3", "--latency-ms", "20", "--concurrency", "4"],
        "redis_cost:",
        {"commands_per_job", "sent_per_job", "scripted_per_job"},
        SCRIPT_TIMEOUT_SECONDS,
    ),
    (
        "job_cpu.py",
        ["--jobs", "10", "--rounds", "1"],
        "job_cpu:",
        {"total_ms", "model_call_ms", "around_ms"},
        SCRIPT_TIMEOUT_SECONDS,
    ),
    ("gate_notify.py", ["20"], "gate:", {"notify_p50_ms", "notify_p99_ms"}, SCRIPT_TIMEOUT_SECONDS),
    (
        "classify.py",
        ["--mb", "0.2", "--runs", "1"],
        "classify:",
        {"log_us", "build_us", "json_us", "listing_us", "unknown_us"},
        SCRIPT_TIMEOUT_SECONDS,
    ),
    (
        "excerpt.py",
        ["--mb", "4", "--runs", "1"],
        "excerpt:",
        {"seconds", "mb_per_s", "peak_mb", "stored_mb", "kept_between"},
        SCRIPT_TIMEOUT_SECONDS,
    ),
    (
        "stall.py",
        ["--rounds", "1", "--loud", "1", "--mb", "2", "--half-open", "60", "--probes", "2"],
        "stall:",
        {"gateway_flood_p99_ms", "api_flood_p99_ms", "gateway_half_open_answered"},
        SCRIPT_TIMEOUT_SECONDS,
    ),
    (
        "windows.py",
        ["--sizes", "120000", "--runs", "1", "--latency-ms", "20", "--concurrency", "8"],
        "windows:",
        {"latency_s", "x_one_request", "requests", "chars_sent"},
        SCRIPT_TIMEOUT_SECONDS,
    ),
    (
        "quote_tokens.py",
        ["tests/corpus-sample"],
        "quote_tokens:",
        {"old_mean", "lines_mean", "new_mean", "ratio", "new_kept"},
        SCRIPT_TIMEOUT_SECONDS,
    ),
]


def summary_fields(line: str) -> dict[str, str]:
    """``key=value`` pairs of a summary line."""
    return dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)


def run_bench(
    script: str, argv: list[str], prefix: str, timeout: float = SCRIPT_TIMEOUT_SECONDS
) -> subprocess.CompletedProcess[str]:
    """Run ``bench/SCRIPT ARGV…`` from the root; it must end well, its last line starting with
    ``prefix`` (its summary line)."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith(prefix), last
    return run


@pytest.mark.parametrize(("script", "argv", "prefix", "expected", "timeout"), TINY_RUNS)
def test_each_benchmark_runs_in_a_tiny_mode_and_prints_its_summary_line(
    script: str, argv: list[str], prefix: str, expected: set[str], timeout: float
) -> None:
    run = run_bench(script, argv, prefix, timeout)
    last = run.stdout.strip().splitlines()[-1]
    assert "timeout_after=" not in run.stdout, run.stdout[-2000:]  # every system finished its jobs
    fields = summary_fields(last)
    for key in expected:  # present, with a value that is not "skipped"
        assert fields.get(key) not in (None, "", "skipped"), (key, last)
