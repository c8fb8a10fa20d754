"""A provider added as one module and one registry line runs a job in a real worker: its own
settings, wire format, start-up check and price are all that tersify needed from it."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tersify.client import Producer
from tersify.contract import Method
from tersify.settings import Settings
from tersify.worker.model import pricing
from tersify.worker.model.providers import PROVIDERS
from tersify.worker.model.providers.registry import setting_fields, unknown_names
from tersify.worker.processes.worker_process import WorkerProcess
from tests.integration.textgen_provider import TextgenProvider

ROOT = Path(__file__).resolve().parents[2]
WITH_TEXTGEN = (sys.executable, "-m", "tests.integration.textgen_provider")
OUTPUT = "\n".join(["FAILED tests/test_io.py::test_read - OSError: disk full"] + ["ok"] * 900)


class TextgenServer(ThreadingHTTPServer):
    """A loopback server speaking the throwaway wire format; it keeps every prompt it got."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.prompts: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        """Its root URL."""
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: TextgenServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.prompts.append({"path": self.path, **body})
        answer = {"summary": "One test fails: the disk is full.", "quotes": ["1"]}
        reply = json.dumps({"text": json.dumps(answer), "tokens_in": 900, "tokens_out": 30})
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply.encode())

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def textgen() -> Iterator[TextgenServer]:
    """The throwaway provider's server, on loopback."""
    server = TextgenServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The throwaway provider in this process's registry too (the worker registers its own)."""
    monkeypatch.setitem(PROVIDERS, TextgenProvider.name, TextgenProvider)


def provider_env(server: TextgenServer) -> dict[str, str]:
    """Settings that send summaries to the throwaway provider."""
    return {
        "summary_provider": "textgen",
        "textgen_base_url": server.url,
        "textgen_model": "tg-1",
        "textgen_usd_per_million": "2",
    }


def test_a_registered_provider_summarizes_a_job_in_a_real_worker(
    settings: Settings,
    textgen: TextgenServer,
    producer: Producer,
    tmp_path: Path,
    start_worker: Callable[..., WorkerProcess],
) -> None:
    start_worker(command=(*WITH_TEXTGEN, "worker"), cwd=ROOT, **provider_env(textgen))
    result = producer.submit(session_id="s", tool_name="bash", output=OUTPUT).wait(60)
    assert (result.method, result.provider, result.model) == (Method.LLM, "textgen", "tg-1")
    assert "disk is full" in result.text and "OSError: disk full" in result.text
    assert (result.input_tokens, result.output_tokens) == (900, 30)
    [prompt] = textgen.prompts
    assert prompt["path"] == "/generate" and prompt["model"] == "tg-1"
    assert "OSError: disk full" in prompt["prompt"]


def test_doctor_runs_a_registered_providers_own_check(
    settings: Settings, textgen: TextgenServer
) -> None:
    env = {"redis_url": settings.redis_url, **provider_env(textgen)}
    done = subprocess.run(
        [*WITH_TEXTGEN, "doctor", "--json"],
        env=settings.child_env(**env),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    found = [json.loads(line) for line in done.stdout.splitlines()]
    assert {"check": "textgen", "level": "ok", "detail": f"textgen server at {textgen.url}"} in (
        found
    )
    assert not [f for f in found if f["check"] == "settings"], found  # its names are known


@pytest.mark.usefixtures("registered")
def test_a_registered_provider_prices_its_own_calls_and_names_its_settings() -> None:
    settings = Settings(summary_provider="textgen", textgen_usd_per_million="2")
    assert pricing.cost(settings, "tg-1", 1_000_000, 500_000) == 3.0
    assert pricing.estimate(settings, 1_000_000, 0) == 2.0
    fields = setting_fields()
    assert fields["TERSIFY_TEXTGEN_USD_PER_MILLION"].description
    misspelled = Settings(textgen_usd_per_milion="2")
    assert unknown_names(misspelled) == [
        ("TERSIFY_TEXTGEN_USD_PER_MILION", "TERSIFY_TEXTGEN_USD_PER_MILLION")
    ]
