"""The soak script runs (tiny and bounded, in each Redis mode) so it cannot rot; the real runs are
in RELIABILITY.md."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "mode", [[], ["--persist"], ["--sentinel"]], ids=["restart", "aof", "sentinel"]
)
def test_a_tiny_soak_loses_nothing_and_applies_nothing_twice(mode: list[str]) -> None:
    soak = [sys.executable, str(ROOT / "bench" / "soak.py"), "--minutes", "0.25", "--rate", "4"]
    done = subprocess.run(
        [*soak, *mode],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    match = re.fullmatch(
        r"soak: submitted=(\d+) results=(\d+) lost=(\d+) applied_twice=(\d+) "
        r"resubmitted=\d+ max_gate_closed_s=[\d.]+ fallback_rate=[\d.]+",
        last,
    )
    assert match, done.stdout[-2000:] + done.stderr[-2000:]
    submitted, results, lost, twice = map(int, match.groups())
    assert submitted > 0 and results == submitted
    assert (lost, twice) == (0, 0)
    assert done.returncode == 0
