"""The gateway benchmark still runs: a tiny mode, checked for its summary line only."""

from __future__ import annotations

import pytest

from tests.unit.test_bench_smoke import run_bench, summary_fields

pytestmark = pytest.mark.slow


def test_the_gateway_benchmark_runs_in_a_tiny_mode_and_prints_its_summary_line() -> None:
    run = run_bench("gateway.py", ["--requests", "3", "--history", "2"], "gateway:")
    fields = summary_fields(run.stdout.strip().splitlines()[-1])
    for kind in ("none", "cached", "uncached"):
        assert float(fields[f"{kind}_p99_ms"]) >= float(fields[f"{kind}_p50_ms"])
    assert fields["rounds"] == "3"
