"""``tersify gateway`` against hostile and buggy clients: real gateway, worker and Redis processes,
requests sent byte by byte where a client library would have normalized them."""

from __future__ import annotations

import json
import re
import secrets
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tersify.store import keys
from tersify.worker.gateway.store import content_key
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer
from tests.integration.gateway import API_KEY, Gateway
from tests.rawhttp import RawResponse, Trap, exchange, request_bytes

StartWorker = Callable[..., WorkerProcess]
StartGateway = Callable[..., Gateway]
SMALL = {
    "model": "claude-opus-5-5",
    "max_tokens": 16,
    "messages": [{"role": "user", "content": "hello"}],
}
ANTHROPIC_HEADERS = {
    "x-api-key": API_KEY,
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
}


@pytest.fixture
def trap() -> Iterator[Trap]:
    """A second loopback listener: no request may reach it."""
    with Trap() as listener:
        yield listener


def send(gateway: Gateway, target: str, headers: dict[str, str] | None = None) -> RawResponse:
    """POST a small Messages body to ``target``, sent on the wire as it is."""
    body = json.dumps(SMALL).encode()
    return exchange(gateway.port, request_bytes("POST", target, body, headers or ANTHROPIC_HEADERS))


# what a request target may hold: the pieces of authorities, schemes and paths an attacker tries
_PIECES = st.sampled_from(
    [
        "@",
        ":",
        "/",
        "//",
        "\\",
        "..",
        ".",
        "%2e",
        "%2E%2e",
        "%2F",
        "%40",
        "?",
        "#",
        "*",
        "http:",
        "https://",
        "127.0.0.1",
        "localhost",
        "[::1]",
        "127.1",
        "0x7f000001",
        "v1",
        "messages",
        "v1/messages",
        "chat/completions",
        "user:pass",
    ]
)


def targets(port: int) -> st.SearchStrategy[str]:
    """Raw request targets built of the pieces, the trap's port among them, and any VCHARs."""
    piece = st.one_of(
        _PIECES,
        st.just(str(port)),
        st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=6),
    )
    return st.lists(piece, min_size=1, max_size=10).map("".join)


def test_no_request_target_sends_a_request_anywhere_but_the_upstream(
    start_gateway: StartGateway, fake_model: FakeModelServer, trap: Trap
) -> None:
    gateway = start_gateway()
    answered: list[tuple[str, int]] = []
    port = trap.port

    @hsettings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(targets(port))
    @example(f"@127.0.0.1:{port}/v1/messages")
    @example(f"@localhost:{port}/v1/chat/completions")
    @example(f"http://127.0.0.1:{port}/v1/messages")
    @example(f":{port}/v1/messages")
    @example(f"//127.0.0.1:{port}/v1/messages")
    @example(f"/v1/../../@127.0.0.1:{port}/v1/messages")
    @example("*")
    def forward(target: str) -> None:
        response = send(gateway, target)
        answered.append((target, response.status))
        assert trap.reached == [], f"{target!r} reached another port"
        assert response.status != 0, f"no answer to {target!r}"
        if not target.startswith("/"):
            assert response.status == 400, target

    forward()
    assert trap.reached == [], f"requests reached another port: {trap.reached[:3]}"
    assert len(answered) >= 300
    assert gateway.process.alive()
    for recorded in fake_model.requests:
        assert recorded.raw == json.dumps(SMALL).encode()


@pytest.mark.parametrize(
    ("target", "anthropic"),
    [
        ("@127.0.0.1:{port}/v1/messages", True),
        ("http://127.0.0.1:{port}/v1/messages", True),
        (":{port}/v1/messages", True),
        ("*", True),
        ("@127.0.0.1:{port}/v1/chat/completions", False),
        ("https://127.0.0.1:{port}/v1/chat/completions", False),
    ],
)
def test_a_target_that_is_not_a_path_is_a_400_in_the_providers_error_shape(
    start_gateway: StartGateway, trap: Trap, target: str, anthropic: bool
) -> None:
    gateway = start_gateway()
    headers = ANTHROPIC_HEADERS if anthropic else {"authorization": f"Bearer {API_KEY}"}
    response = send(gateway, target.format(port=trap.port), headers)
    assert response.status == 400
    error = json.loads(response.body)
    if anthropic:
        assert error["type"] == "error"
        assert error["error"]["type"] == "invalid_request_error"
    else:
        assert error["error"]["type"] == "invalid_request_error"
        assert error["error"]["code"] is None
    assert "must be a path" in response.body.decode()
    assert trap.reached == []


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@pytest.mark.parametrize("log_format", ["console", "json"])
def test_no_log_line_of_failing_requests_holds_the_clients_key(
    log_format: str, start_gateway: StartGateway, redis_client: redis.Redis
) -> None:
    key = "sk-ant-api03-" + secrets.token_hex(24)
    session = "logged-session"
    gateway = start_gateway(log_format=log_format, gateway_max_body_bytes=str(256 * 1024))
    closed = socket.socket()  # bound, never listening: connections to it are refused
    closed.bind(("127.0.0.1", 0))
    nowhere = start_gateway(
        log_format=log_format,
        gateway_anthropic_upstream=f"http://127.0.0.1:{closed.getsockname()[1]}",
    )
    result = "".join(f"line {n}: built target {n}\n" for n in range(400))
    # a replacement stored corrupt (not UTF-8): reading it fails inside the rewrite
    redis_client.hset(keys.gateway_rewrite(content_key(session, result)), "text", b"\xff\xfe")
    headers = {**ANTHROPIC_HEADERS, "x-api-key": key, "x-tersify-session": session}
    body = json.dumps(turn_with(result)).encode()
    failed = exchange(gateway.port, request_bytes("POST", "/v1/messages", body, headers))
    assert failed.status == 200
    assert "the rewrite failed" in failed.headers["warning"]
    big = json.dumps(turn_with("x" * 300_000)).encode()
    assert exchange(gateway.port, request_bytes("POST", "/v1/messages", big, headers)).status == 413
    deep = json.dumps(turn_with("[" * 2000 + "]" * 2000)).replace('"[[', "[[").replace(']]"', "]]")
    sent = exchange(gateway.port, request_bytes("POST", "/v1/messages", deep.encode(), headers))
    assert sent.status
    assert exchange(gateway.port, request_bytes("POST", "@h:1/v1/messages", body, headers)).status
    lost = exchange(nowhere.port, request_bytes("POST", "/v1/messages", body, headers))
    closed.close()
    assert lost.status == 502
    gateway.process.stop()
    nowhere.process.stop()
    logs = _ANSI.sub("", gateway.process.log() + nowhere.process.log())
    assert "gateway_rewrite_failed" in logs and "Traceback" in logs  # a traceback was written
    assert "gateway_upstream_unreachable" in logs
    assert [line for line in logs.splitlines() if key in line or key[:24] in line] == []


def turn_with(result: str) -> dict[str, Any]:
    """A Messages request whose one shell call returned ``result``."""
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}
    return {
        **SMALL,
        "messages": [
            {"role": "user", "content": "Build it."},
            {"role": "assistant", "content": [call]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": result}],
            },
        ],
    }
