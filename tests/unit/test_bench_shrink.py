"""bench/shrink.py runs end to end in its quick mode."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "shrink.py"


def test_the_shrink_bench_quick_mode_ends_with_its_summary_line() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert re.fullmatch(r"shrink: fallback_ms=\d+\.\d extractive_ms=\d+\.\d", lines[-1])
    assert len(lines) == 8  # six types, the grounding line, the summary


def test_the_shrink_bench_times_another_revision_beside_this_one() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--against", "HEAD", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert re.fullmatch(r"against: fallback_ms=\d+\.\d extractive_ms=\d+\.\d ref=HEAD", lines[-2])
    assert re.fullmatch(r"shrink: fallback_ms=\d+\.\d extractive_ms=\d+\.\d", lines[-1])
    rows = [line for line in lines if line.split()[:1] in (["CommandOutput"], ["WebContent"])]
    assert len(rows) == 2 and all(len(row.split()) == 5 for row in rows)
