"""``tersify gateway`` against hostile and buggy clients: real gateway, worker and Redis processes,
requests sent byte by byte where a client library would have normalized them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

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
