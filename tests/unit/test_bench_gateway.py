"""The gateway benchmark still runs: a tiny mode, checked for its summary line only."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.unit.test_bench_smoke import ROOT, SCRIPT_TIMEOUT_SECONDS, summary_fields

pytestmark = pytest.mark.slow


def test_the_gateway_benchmark_runs_in_a_tiny_mode_and_prints_its_summary_line() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gateway.py"), "--requests", "3", "--history", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT_SECONDS,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith("gateway:"), last
    fields = summary_fields(last)
    for kind in ("none", "cached", "uncached"):
        assert float(fields[f"{kind}_p99_ms"]) >= float(fields[f"{kind}_p50_ms"])
    assert fields["rounds"] == "3"
