"""``tersify gateway`` against hostile and buggy clients: real gateway, worker and Redis processes,
requests sent byte by byte where a client library would have normalized them."""

from __future__ import annotations

import json
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.gateway.store import content_key
from tersify.worker.processes.group import GroupProcess
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer
from tests.helpers import free_port, tersify_argv, wait_for
from tests.integration.gateway import API_KEY, Gateway, port_open
from tests.rawhttp import (
    RawResponse,
    Trap,
    all_closed_by_server,
    exchange,
    half_open_many,
    raise_fd_limit,
    request_bytes,
)

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


def deep_turn(depth: int) -> bytes:
    """A Messages request whose tool result content is arrays nested ``depth`` deep."""
    nested = "[" * depth + "]" * depth
    text = json.dumps(turn_with("placeholder"))
    return text.replace('"placeholder"', nested).encode()


UNREADABLE_BODIES = {
    "nested 2,000 deep": deep_turn(2000),
    "nested 100,000 deep": deep_turn(100_000),
    "not UTF-8": json.dumps(turn_with("x" * 5000)).encode().replace(b"xxxx", b"\xff\xfe", 3),
    "a duplicate key": b'{"model":"m","messages":[],"input":[],"messages":[],"input":[]}',
    "trailing garbage": json.dumps(SMALL).encode() + b"}{",
    "not an object": b"[1, 2, 3]",
}
ODD_SHAPES = [
    {"model": "m", "messages": [{"role": "assistant", "tool_calls": 5}]},
    {"model": "m", "messages": "x", "input": 7},
    {"model": ["m"], "messages": [{"role": "user", "content": 3}], "input": [None, 1, "x"]},
    {"model": "m", "messages": [{"role": "tool", "content": [{"type": "text", "text": 1}]}]},
    {"model": "m", "input": [{"type": "function_call_output", "output": {"a": 1}}]},
]


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/chat/completions", "/v1/responses"])
def test_a_body_the_gateway_cannot_read_goes_upstream_byte_for_byte_with_a_warning(
    path: str, start_gateway: StartGateway, fake_model: FakeModelServer
) -> None:
    gateway = start_gateway()
    for name, body in UNREADABLE_BODIES.items():
        before = len(fake_model.requests)
        answer = exchange(gateway.port, request_bytes("POST", path, body, ANTHROPIC_HEADERS))
        assert answer.status not in (0, 500), name
        assert [r.raw for r in fake_model.requests[before:]] == [body], name
        assert "forwarded as sent" in answer.headers.get("warning", ""), name
    for shape in ODD_SHAPES:
        body = json.dumps(shape).encode()
        before = len(fake_model.requests)
        answer = exchange(gateway.port, request_bytes("POST", path, body, ANTHROPIC_HEADERS))
        assert answer.status not in (0, 500), shape
        assert [r.raw for r in fake_model.requests[before:]] == [body], shape
    assert gateway.process.alive()


def test_every_summary_made_in_time_is_used_however_soon_it_was_ready(
    start_worker: StartWorker, start_gateway: StartGateway, fake_model: FakeModelServer
) -> None:
    start_worker()  # the local summarizer: each summary is ready within milliseconds
    gateway = start_gateway()
    count = 150
    calls, results = [], []
    for n in range(count):
        calls.append(
            {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "ls"}}
        )
        text = "".join(f"result {n} line {i}: ok {i * n}\n" for i in range(250))
        results.append({"type": "tool_result", "tool_use_id": f"t{n}", "content": text})
    body = {
        **SMALL,
        "messages": [
            {"role": "user", "content": "List them all."},
            {"role": "assistant", "content": calls},
            {"role": "user", "content": results},
        ],
    }
    answer = exchange(
        gateway.port,
        request_bytes("POST", "/v1/messages", json.dumps(body).encode(), ANTHROPIC_HEADERS),
        timeout=120,
    )
    assert answer.status == 200
    assert "warning" not in answer.headers
    assert answer.headers["tersify-rewrites"] == f"new={count}, reused=0, fallback=0"
    (forwarded,) = [r for r in fake_model.requests if b"List them all." in r.raw]
    assert b"result 7 line 100: ok 700" not in forwarded.raw


def test_two_agents_without_a_session_header_and_the_same_opening_never_share_a_session(
    start_gateway: StartGateway,
) -> None:
    gateway = start_gateway()
    body = json.dumps(SMALL).encode()

    def session(headers: dict[str, str], source: str = "127.0.0.1") -> str:
        transport = httpx.HTTPTransport(local_address=source)
        with httpx.Client(transport=transport, timeout=30) as http:
            answer = http.post(gateway.url + "/v1/messages", content=body, headers=headers)
        return answer.headers["tersify-session"]

    one = session({**ANTHROPIC_HEADERS, "x-api-key": "sk-ant-agent-one"})
    two = session({**ANTHROPIC_HEADERS, "x-api-key": "sk-ant-agent-two"})
    assert one != two
    assert session({**ANTHROPIC_HEADERS, "x-api-key": "sk-ant-agent-one"}) == one
    keyless = {k: v for k, v in ANTHROPIC_HEADERS.items() if k != "x-api-key"}
    here, there = session(keyless, "127.0.0.1"), session(keyless, "127.0.0.2")
    assert here != there and len({one, two, here, there}) == 4
    assert session(keyless, "127.0.0.1") == here


@pytest.mark.slow
def test_the_gateway_answers_under_a_256_fd_limit_with_1100_half_open_connections(
    settings: Settings, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    raise_fd_limit(2400)  # this test's own sockets
    port = free_port()
    env = {
        "redis_url": settings.redis_url,
        "gateway_anthropic_upstream": fake_model.url,
        "gateway_header_timeout_seconds": "2",
        "gateway_body_timeout_seconds": "3",
        "log_format": "json",
    }
    limited = ("sh", "-c", 'ulimit -n 256 && exec "$@"', "sh")
    process = GroupProcess(
        [*limited, *tersify_argv("gateway", "--listen", f"127.0.0.1:{port}")],
        env=settings.child_env(**env),
        log_path=tmp_path / "gateway.log",
    )
    process.start()
    try:
        process.wait_until(lambda: port_open(port), "the gateway listening", 30)
        openers = (
            b"",  # silent
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n",  # headers never finished
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 9999\r\n\r\n{",
        )
        with half_open_many(port, 1100, openers) as socks:
            answered = wait_for(lambda: _forwarded(port), "a request answered", timeout=60)
            assert answered == 200
            assert all_closed_by_server(socks, 15)
        assert process.alive()
        page = httpx.get(f"http://127.0.0.1:{port}/tersify/metrics", timeout=10).text
        counts = {
            reason: float(value)
            for reason, value in re.findall(
                r'tersify_gateway_connections_closed_total\{reason="(\w+)"\} (\S+)', page
            )
        }
        assert counts["header_timeout"] > 0 and counts["body_timeout"] > 0 and counts["evicted"] > 0
    finally:
        process.stop()


def _forwarded(port: int) -> int:
    """The status of one small request through the gateway; 0 when it got none."""
    try:
        body = json.dumps(SMALL).encode()
        url = f"http://127.0.0.1:{port}/v1/messages"
        return httpx.post(url, content=body, headers=ANTHROPIC_HEADERS, timeout=3).status_code
    except httpx.TransportError:
        return 0


def test_a_20_mb_tool_result_never_holds_another_agents_request(
    start_worker: StartWorker, start_gateway: StartGateway
) -> None:
    start_worker()
    gateway = start_gateway(gateway_wait_seconds="0.5")  # then cancelled: the gateway's own work
    line = "src/pkg/module.py:{:07d}: result = compute(value, options={{'mode': 'fast'}})\n"
    big = "".join(line.format(i) for i in range(20 * 1024 * 1024 // len(line.format(0))))
    took: dict[str, list[float]] = {"loud": [], "quiet": []}

    def send(kind: str, body: bytes) -> None:
        started = time.monotonic()
        answer = exchange(
            gateway.port, request_bytes("POST", "/v1/messages", body, ANTHROPIC_HEADERS), 300
        )
        assert answer.status == 200
        took[kind].append(time.monotonic() - started)

    loud = [
        threading.Thread(target=send, args=("loud", json.dumps(turn_with(big + str(n))).encode()))
        for n in range(2)
    ]
    for thread in loud:
        thread.start()
    time.sleep(0.5)  # the bodies are on their way
    while any(thread.is_alive() for thread in loud) and len(took["quiet"]) < 500:
        send("quiet", json.dumps(SMALL).encode())
    for thread in loud:
        thread.join(300)
    assert len(took["loud"]) == 2 and took["quiet"], took
    # every quiet request answered while the large results were read, cut, hashed and
    # compressed, in a fraction of the time either took: never queued behind that work
    assert max(took["quiet"]) * 5 < min(took["loud"]), took
