"""Schemathesis against a running ``tersify api``: no server error, every response as documented."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tersify.settings import Settings
from tersify.worker.api.openapi import DOCUMENT
from tests.integration.test_api import TOKEN, ApiServer

pytestmark = pytest.mark.slow

HTTP = frozenset({"get", "put", "post", "delete", "patch"})
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
CHECKS = ",".join(
    [
        "not_a_server_error",
        "response_schema_conformance",
        "status_code_conformance",
        "content_type_conformance",
        "ignored_auth",
    ]
)


@pytest.fixture
def fuzzed_api(settings: Settings, tmp_path: Path) -> Iterator[ApiServer]:
    """A one-process API whose long-polls are cut short, so fuzzed ``?wait=`` values stay fast."""
    server = ApiServer(settings, tmp_path, workers=1, api_tokens=TOKEN, api_max_wait_seconds="0.2")
    yield server.start()
    server.stop()


def test_schemathesis_finds_no_server_error_and_no_schema_violation(fuzzed_api: ApiServer) -> None:
    run = subprocess.run(
        [
            str(SCHEMATHESIS),
            "run",
            f"{fuzzed_api.url}/openapi.json",
            "--header",
            f"Authorization: Bearer {TOKEN}",
            "--checks",
            CHECKS,
            "--phases",
            "coverage,fuzzing,stateful",
            "--max-examples",
            "25",
            "--request-timeout",
            "10",
            # one worker: hypothesis' lambda-source reader is not thread-safe (SystemError)
            "--workers",
            "1",
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report[-8000:]
    generated = re.search(r"(\d+) generated, (\d+) passed", report)
    assert generated is not None, report[-3000:]
    assert int(generated[1]) == int(generated[2]) > 100  # it really exercised the API
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    operations = sum(1 for path in document["paths"].values() for method in path if method in HTTP)
    assert f"{operations} selected / {operations} total" in report  # every route, /v1/repair too
