"""The benchmarks still run: each script in a tiny mode, checked for its summary line only.

Timings are not asserted here (they live in docs/PERFORMANCE.md); each script starts its own
redis-server, fake model and worker, so this only needs redis-server on PATH.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT_TIMEOUT_SECONDS = 60

TINY_RUNS = [
    (
        "throughput.py",
        ["--jobs", "6", "--latency-ms", "20", "--concurrency", "4", "--max-seconds", "30"],
        "throughput:",
        # no --peer-python: the peers are skipped and say so
        {"tersify", "celery_bare", "ratio", "cpu_ms_per_job"}
        | {"arq=skipped", "dramatiq=skipped", "arq_ratio=skipped", "dramatiq_ratio=skipped"},
    ),
    (
        "overhead.py",
        ["--jobs", "6", "--latency-ms", "20", "--concurrency", "4", "--max-seconds", "30"],
        "overhead:",
        {"p50_ms", "p99_ms", "gate_notify_p99_ms"},
    ),
    (
        "memory.py",
        ["--inflight", "4", "--chars", "3000", "--latency-ms", "3000", "--max-seconds", "30"],
        "memory:",
        {"inflight", "rss_mb"},
    ),
    ("gate_notify.py", ["20"], "gate:", {"notify_p50_ms", "notify_p99_ms"}),
]


def summary_fields(line: str) -> dict[str, str]:
    """``key=value`` pairs of a summary line."""
    return dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)


@pytest.mark.parametrize(("script", "argv", "prefix", "expected"), TINY_RUNS)
def test_each_benchmark_runs_in_a_tiny_mode_and_prints_its_summary_line(
    script: str, argv: list[str], prefix: str, expected: set[str]
) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT_SECONDS,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith(prefix), last
    fields = summary_fields(last)
    for item in expected:  # "key" must be present with a value; "key=value" must match
        key, _, value = item.partition("=")
        assert fields.get(key), (key, last)
        assert not value or fields[key] == value, (item, last)
