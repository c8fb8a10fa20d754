"""Running ``tersify gateway`` for the tests, and what they build and compare requests with."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import httpx
import httpx2

from tersify.settings import Settings
from tersify.worker.processes.group import GroupProcess
from tests.fakemodel import FakeModelServer, RecordedRequest
from tests.helpers import free_port, tersify_argv

API_KEY = "sk-ant-test-0123456789abcdef"
# A pytest log: long enough to be replaced, with lines a summary keeps.
BIG_LOG = (
    "".join(
        f"tests/test_mod{n % 7}.py::test_case_{n} {'FAILED' if n % 50 == 0 else 'PASSED'}\n"
        for n in range(600)
    )
    + "E   AssertionError: expected 200, got 500\n"
)


def port_open(port: int) -> bool:
    """Whether something accepts connections on the loopback ``port``."""
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def launch(settings: Settings, upstream: str, log_dir: Path, **env: str) -> Gateway:
    """Start ``tersify gateway`` on a free port before ``upstream`` (``env``: setting overrides)."""
    port = free_port()
    overrides = {
        "redis_url": settings.redis_url,
        "gateway_anthropic_upstream": upstream,
        "gateway_openai_upstream": upstream,
        "log_format": "json",
        **env,
    }
    process = GroupProcess(
        tersify_argv("gateway", "--listen", f"127.0.0.1:{port}"),
        env=settings.child_env(**overrides),
        log_path=log_dir / f"gateway-{port}.log",
    )
    process.start()
    process.wait_until(lambda: port_open(port), "the gateway listening", 30)
    return Gateway(process, port)


class Gateway:
    """A running gateway: its URLs and its process."""

    def __init__(self, process: GroupProcess, port: int) -> None:
        self.process = process
        self.port = port
        self.url = f"http://127.0.0.1:{port}"

    @property
    def openai_url(self) -> str:
        """The base URL an OpenAI client takes (with ``/v1``)."""
        return self.url + "/v1"

    def metrics(self) -> str:
        """The gateway's Prometheus page."""
        return httpx.get(self.url + "/tersify/metrics", timeout=5).text


def model_requests(fake: FakeModelServer, path: str = "/v1/messages") -> list[RecordedRequest]:
    """The requests that reached the fake at ``path`` (not the workers' summary calls)."""
    return [r for r in fake.requests if r.path == path and b"tool_output_" not in r.raw]


def common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes ``a`` and ``b`` share."""
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def replaced(sent: bytes, forwarded: bytes, literal: bytes) -> Any:
    """The value that stands where ``literal`` stood in ``sent``, when ``forwarded`` is ``sent``
    with exactly that one stretch changed (else the test fails here)."""
    at = sent.index(literal)
    before, after = sent[:at], sent[at + len(literal) :]
    assert forwarded.startswith(before), "the bytes before the tool result changed"
    assert forwarded.endswith(after), "the bytes after the tool result changed"
    return json.loads(forwarded[len(before) : len(forwarded) - len(after)])


class Capture:
    """A request hook that keeps the bodies an SDK sent (the SDKs' own httpx2 client)."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []

    def __call__(self, request: httpx2.Request) -> None:
        self.bodies.append(request.read())
        self.headers.append(dict(request.headers))

    def client(self) -> httpx2.Client:
        """An ``http_client`` for an SDK, whose requests this captures."""
        return httpx2.Client(event_hooks={"request": [self]}, timeout=30)
