"""A large application log through a real worker: summarized as a program's report, each kept
exception line with the traceback header it belongs to."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tests.applogs import EXCEPTION, STAMPS, app_log
from tests.helpers import tersify

HEADER = "Traceback (most recent call last):"


@pytest.mark.parametrize("stamp", ["python logging", "syslog"])
def test_a_large_application_log_keeps_each_traceback_header_with_its_exception(
    stamp: str, settings: Settings, start_worker: Callable[..., WorkerProcess], tmp_path: Path
) -> None:
    start_worker()
    log = tmp_path / "current"
    log.write_text(app_log(60_000, STAMPS[stamp], seed=44, tracebacks=5))  # about 5 MB
    done = tersify(settings, "submit", str(log), "--tool", "bash", timeout=180)
    assert done.returncode == 0, done.stderr
    assert " · CommandOutput · " in done.stderr.splitlines()[0]
    lines = done.stdout.splitlines()
    exceptions = [i for i, line in enumerate(lines) if line.startswith(EXCEPTION)]
    assert exceptions, done.stdout
    for at in exceptions:  # its header above it, within the traceback's few lines
        assert any(line.startswith(HEADER) for line in lines[max(0, at - 7) : at]), done.stdout
