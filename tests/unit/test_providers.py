"""The Anthropic and OpenAI providers against the loopback fake, and the client pool under them."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, Literal

import httpx
import pytest
from pydantic import SecretStr

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.worker.model.providers import (
    AnswerFormat,
    AnthropicProvider,
    ClientPool,
    Correction,
    ModelRequest,
    OpenAIProvider,
    make_provider,
)
from tersify.worker.model.providers.http import retry_after_seconds
from tersify.worker.model.providers.remote import HttpProvider
from tests.fakemodel import (
    SUMMARY_PREFIX,
    Behaviour,
    FakeModelServer,
    answer,
    close_mid_body,
    empty,
    hang,
    malformed,
    ok,
    oversized,
    raw,
    slow_drip,
    status,
)

SECRET = "sk-test-SECRET-123"
REQUEST = ModelRequest(
    system="Summarize the command output; keep errors verbatim.",
    user="<tool_output>\n" + "E   assert 1 == 2\n" * 200 + "</tool_output>",
    max_tokens=300,
)
Kind = Literal["anthropic", "openai"]
KINDS: list[Kind] = ["anthropic", "openai"]
MakeProvider = Callable[..., HttpProvider]


@pytest.fixture
def make(fake_model: FakeModelServer) -> Iterator[MakeProvider]:
    """Build providers of either kind against the fake; all are closed after the test."""
    made: list[HttpProvider] = []

    def build(
        kind: Kind,
        *,
        key: str | None = SECRET,
        base_url: str | None = None,
        pool_size: int = 2,
    ) -> HttpProvider:
        cls = AnthropicProvider if kind == "anthropic" else OpenAIProvider
        url = base_url or (
            fake_model.anthropic_base_url if kind == "anthropic" else fake_model.openai_base_url
        )
        secret = SecretStr(key) if key is not None else None
        provider = cls(secret, url, f"{kind}-model", connect_timeout=1.0, pool_size=pool_size)
        made.append(provider)
        return provider

    yield build
    for provider in made:
        provider.close()


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def fail(provider: HttpProvider, timeout: float = 2.0) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        provider.complete(REQUEST, timeout)
    return caught.value


# success and wire format


@pytest.mark.parametrize("kind", KINDS)
def test_a_summary_comes_back_with_text_model_and_tokens(make: MakeProvider, kind: Kind) -> None:
    completion = make(kind).complete(REQUEST, timeout=5.0)
    assert completion.text == SUMMARY_PREFIX + ("E   assert 1 == 2\n" * 200).strip()[:200]
    assert completion.model == f"{kind}-model"
    assert completion.input_tokens is not None and completion.input_tokens > 100
    assert completion.output_tokens == (len(completion.text) + 3) // 4


def test_the_anthropic_call_is_a_messages_post_with_key_and_version(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    make("anthropic").complete(REQUEST, timeout=5.0)
    (sent,) = fake_model.requests
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.headers["x-api-key"] == SECRET
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert "authorization" not in sent.headers
    assert sent.body == {
        "model": "anthropic-model",
        "max_tokens": 300,
        "system": REQUEST.system,
        "messages": [{"role": "user", "content": REQUEST.user}],
    }


def test_the_openai_call_is_a_chat_completions_post_with_a_bearer_token(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    make("openai").complete(REQUEST, timeout=5.0)
    (sent,) = fake_model.requests
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == f"Bearer {SECRET}"
    assert sent.headers["content-type"] == "application/json"
    assert "x-api-key" not in sent.headers
    assert sent.body == {
        "model": "openai-model",
        "max_tokens": 300,
        "messages": [
            {"role": "system", "content": REQUEST.system},
            {"role": "user", "content": REQUEST.user},
        ],
    }


def test_an_openai_compatible_server_without_a_key_gets_no_authorization_header(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    make("openai", key=None).complete(REQUEST, timeout=5.0)
    assert "authorization" not in fake_model.requests[0].headers


def test_a_trailing_slash_on_the_base_url_is_harmless(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    make("openai", base_url=fake_model.openai_base_url + "/").complete(REQUEST, timeout=5.0)
    assert fake_model.requests[0].path == "/v1/chat/completions"


FORMAT = AnswerFormat(
    name="tool_output_summary",
    description="The summary and the lines to quote.",
    schema={
        "type": "object",
        "properties": {"summary": {"type": "string"}},
        "required": ["summary"],
        "additionalProperties": False,
    },
)
STRUCTURED = replace(REQUEST, answer_format=FORMAT)


def test_an_anthropic_structured_request_forces_one_tool_and_reads_its_input(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    fake_model.set_default(answer({"summary": "one assertion fails"}))
    completion = make("anthropic").complete(STRUCTURED, timeout=5.0)
    assert completion.data == {"summary": "one assertion fails"}
    assert completion.call_id is not None and completion.call_id.startswith("toolu_")
    (sent,) = fake_model.requests
    assert sent.body["tools"] == [
        {"name": FORMAT.name, "description": FORMAT.description, "input_schema": FORMAT.schema}
    ]
    assert sent.body["tool_choice"] == {"type": "tool", "name": FORMAT.name}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (
            "json_schema",
            {
                "type": "json_schema",
                "json_schema": {
                    "name": FORMAT.name,
                    "description": FORMAT.description,
                    "schema": FORMAT.schema,
                    "strict": True,
                },
            },
        ),
        ("json_object", {"type": "json_object", "schema": FORMAT.schema}),
        ("text", None),
    ],
)
def test_an_openai_structured_request_asks_by_the_configured_response_format(
    fake_model: FakeModelServer, mode: str, expected: dict[str, Any] | None
) -> None:
    provider = OpenAIProvider(
        SecretStr(SECRET), fake_model.openai_base_url, "m", connect_timeout=1.0, pool_size=1,
        response_format=mode,  # type: ignore[arg-type]
    )  # fmt: skip
    request = replace(STRUCTURED, system=STRUCTURED.system + " Answer in JSON.")
    try:
        completion = provider.complete(request, timeout=5.0)
    finally:
        provider.close()
    assert fake_model.requests[0].body.get("response_format") == expected
    assert completion.data is None  # the JSON is in the text, read by the caller


@pytest.mark.parametrize("kind", KINDS)
def test_a_correction_replays_the_refused_answer_and_says_why(
    fake_model: FakeModelServer, make: MakeProvider, kind: Kind
) -> None:
    provider = make(kind)
    refused = provider.complete(STRUCTURED, timeout=5.0)
    provider.complete(replace(STRUCTURED, correction=Correction(refused, "too long")), 5.0)
    assert fake_model.request_count == 2  # the fake refuses turns the real API refuses
    said, told = fake_model.requests[1].body["messages"][-2:]
    if kind == "anthropic":
        assert said["content"][0]["id"] == refused.call_id
        assert told["content"][0]["content"] == "too long"
    else:
        assert json.loads(said["content"]) == json.loads(refused.text)
        assert told == {"role": "user", "content": "too long"}


def test_an_answer_refused_by_one_provider_is_replayed_to_another_as_text(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    refused = make("openai").complete(STRUCTURED, timeout=5.0)
    make("anthropic").complete(replace(STRUCTURED, correction=Correction(refused, "no")), 5.0)
    said, told = fake_model.requests[1].body["messages"][-2:]
    assert said == {"role": "assistant", "content": refused.text}
    assert told == {"role": "user", "content": "no"}


def test_a_tool_call_without_an_input_object_is_malformed(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    body = {"model": "m", "content": [{"type": "tool_use", "id": "toolu_1", "name": "t"}]}
    fake_model.set_default(raw(json.dumps(body)))
    assert fail(make("anthropic")).reason is FallbackReason.MALFORMED


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_answer_is_returned_as_empty_text(
    fake_model: FakeModelServer, make: MakeProvider, kind: Kind
) -> None:
    fake_model.set_default(empty())
    assert make(kind).complete(REQUEST, timeout=5.0).text == ""


@pytest.mark.parametrize("kind", KINDS)
def test_an_oversized_answer_is_returned_for_the_caller_to_judge(
    fake_model: FakeModelServer, make: MakeProvider, kind: Kind
) -> None:
    fake_model.set_default(oversized(50_000))
    assert len(make(kind).complete(REQUEST, timeout=5.0).text) == 50_000


def test_an_openai_null_content_is_an_empty_answer(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    fake_model.set_default(raw('{"model": "m", "choices": [{"message": {"content": null}}]}'))
    completion = make("openai").complete(REQUEST, timeout=5.0)
    assert (completion.text, completion.input_tokens) == ("", None)


def test_anthropic_text_blocks_are_joined_and_other_blocks_skipped(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    fake_model.set_default(
        raw(
            '{"model": "m", "content": [{"type": "text", "text": "a"}, {"type": "thinking",'
            ' "thinking": "hm"}, {"type": "text", "text": "b"}], "usage": {"input_tokens": 5}}'
        )
    )
    completion = make("anthropic").complete(REQUEST, timeout=5.0)
    assert (completion.text, completion.input_tokens, completion.output_tokens) == ("ab", 5, None)


@pytest.mark.parametrize("kind", KINDS)
def test_one_pooled_connection_is_kept_alive_across_calls(
    fake_model: FakeModelServer, make: MakeProvider, kind: Kind
) -> None:
    provider = make(kind, pool_size=1)
    for _ in range(5):
        provider.complete(REQUEST, timeout=5.0)
    assert (fake_model.request_count, fake_model.connection_count) == (5, 1)


# failures


FAILURES: list[tuple[str, Behaviour, FallbackReason]] = [
    ("429", status(429, retry_after=7), FallbackReason.RATE_LIMITED),
    ("500", status(500), FallbackReason.SERVER_ERROR),
    ("503", status(503, retry_after=2), FallbackReason.SERVER_ERROR),
    ("529", status(529), FallbackReason.SERVER_ERROR),
    ("400", status(400), FallbackReason.CLIENT_ERROR),
    ("401", status(401), FallbackReason.CLIENT_ERROR),
    ("404", status(404), FallbackReason.CLIENT_ERROR),
    ("408", status(408), FallbackReason.TIMEOUT),
    ("malformed", malformed(), FallbackReason.MALFORMED),
    ("json_array", raw("[1, 2]"), FallbackReason.MALFORMED),
    ("no_content", raw('{"id": "x", "usage": {}}'), FallbackReason.MALFORMED),
    ("close_mid_body", close_mid_body(), FallbackReason.CONNECTION_ERROR),
    ("hang", hang(), FallbackReason.TIMEOUT),
    ("slow_drip", slow_drip(3.0), FallbackReason.TIMEOUT),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("behaviour", "reason"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES]
)
def test_every_failure_is_a_provider_error_with_its_reason(
    fake_model: FakeModelServer,
    make: MakeProvider,
    kind: Kind,
    behaviour: Behaviour,
    reason: FallbackReason,
) -> None:
    fake_model.set_default(behaviour)
    # only a hang or a drip needs the timeout to fire; a busy machine must not turn the others
    # (answered at once) into timeouts
    error = fail(make(kind), timeout=0.5 if reason is FallbackReason.TIMEOUT else 10.0)
    assert error.reason is reason
    assert 0 < len(error.detail) <= 200


@pytest.mark.parametrize("kind", KINDS)
def test_a_429_carries_the_retry_after_the_server_asked_for(
    fake_model: FakeModelServer, make: MakeProvider, kind: Kind
) -> None:
    fake_model.set_default(status(429, retry_after=7))
    error = fail(make(kind))
    assert (error.reason, error.retry_after, error.retryable) == (
        FallbackReason.RATE_LIMITED,
        7.0,
        True,
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_429_without_retry_after_leaves_it_unset(
    fake_model: FakeModelServer, make: MakeProvider, kind: Kind
) -> None:
    fake_model.set_default(status(429))
    assert fail(make(kind)).retry_after is None


@pytest.mark.parametrize(
    ("kind", "error_type"),
    [("anthropic", "authentication_error"), ("openai", "invalid_request_error")],
)
def test_the_detail_names_the_status_and_the_apis_error_type_and_message(
    fake_model: FakeModelServer, make: MakeProvider, kind: Kind, error_type: str
) -> None:
    fake_model.set_default(status(401, message="invalid x-api-key"))
    provider = make(kind)
    error = fail(provider)
    url = provider.base_url + provider.path  # where it was asked, to spot a wrong base URL
    assert error.detail == f"HTTP 401 {error_type}: invalid x-api-key ({url})"
    assert not error.retryable


def test_a_refused_connection_is_a_connection_error(make: MakeProvider) -> None:
    provider = make("openai", base_url=f"http://127.0.0.1:{closed_port()}/v1")
    error = fail(provider)
    assert error.reason is FallbackReason.CONNECTION_ERROR
    assert error.retryable


def test_a_base_url_that_is_not_http_is_a_client_error(make: MakeProvider) -> None:
    error = fail(make("openai", base_url="ftp://127.0.0.1/v1"))
    assert error.reason is FallbackReason.CLIENT_ERROR
    assert not error.retryable


def test_a_closed_provider_fails_with_a_provider_error(make: MakeProvider) -> None:
    provider = make("anthropic")
    provider.close()
    assert fail(provider).reason is FallbackReason.CONNECTION_ERROR


def test_the_timeout_is_a_total_budget_even_while_bytes_keep_arriving(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    fake_model.set_default(slow_drip(5.0))
    started = time.monotonic()
    error = fail(make("anthropic"), timeout=0.3)
    assert error.reason is FallbackReason.TIMEOUT
    assert time.monotonic() - started < 2.0


def test_no_time_left_fails_at_once_without_a_request(
    fake_model: FakeModelServer, make: MakeProvider
) -> None:
    assert fail(make("anthropic"), timeout=0.0).reason is FallbackReason.TIMEOUT
    assert fake_model.request_count == 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_call_after_a_broken_one_succeeds_on_the_same_pool(
    fake_model: FakeModelServer, make: MakeProvider, kind: Kind
) -> None:
    provider = make(kind, pool_size=1)
    fake_model.script([close_mid_body(), hang(), ok("fine")])
    assert fail(provider, timeout=10.0).reason is FallbackReason.CONNECTION_ERROR
    assert fail(provider, timeout=0.3).reason is FallbackReason.TIMEOUT
    assert provider.complete(REQUEST, timeout=5.0).text == "fine"


# secrets


def chain(error: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = error
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


SECRET_FAILURES = [*FAILURES, ("echoed_key", status(401, message=f"bad key {SECRET}"), None)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "behaviour", [f[1] for f in SECRET_FAILURES], ids=[f[0] for f in SECRET_FAILURES]
)
def test_the_key_appears_in_no_error_or_provider_text(
    fake_model: FakeModelServer, make: MakeProvider, kind: Kind, behaviour: Behaviour
) -> None:
    provider = make(kind)
    fake_model.set_default(behaviour)
    error = fail(provider, timeout=0.3)
    texts = [repr(provider), str(provider), error.detail]
    for link in chain(error):
        texts += [str(link), repr(link), *map(str, link.args)]
    assert all(SECRET not in text for text in texts)
    assert "x-api-key:" not in error.detail.lower()
    assert "authorization" not in error.detail.lower()


def test_the_key_appears_in_no_error_when_the_connection_is_refused(make: MakeProvider) -> None:
    provider = make("anthropic", base_url=f"http://127.0.0.1:{closed_port()}")
    error = fail(provider)
    assert all(SECRET not in str(link) + repr(link) for link in chain(error))
    assert SECRET not in repr(provider)


# retry-after parsing


def test_retry_after_reads_seconds_dates_and_milliseconds() -> None:
    assert retry_after_seconds(httpx.Headers({"retry-after": "2.5"})) == 2.5
    assert retry_after_seconds(httpx.Headers({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    assert retry_after_seconds(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 120))
    assert 100 < (retry_after_seconds(httpx.Headers({"retry-after": future})) or 0) <= 120
    assert retry_after_seconds(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx.Headers({})) is None


# construction from settings


def test_make_provider_builds_each_provider_from_settings(fake_model: FakeModelServer) -> None:
    settings = Settings(
        anthropic_api_key=SecretStr(SECRET),
        anthropic_base_url=fake_model.anthropic_base_url,
        openai_base_url=fake_model.openai_base_url,
        openai_model="llama3",
        model_connect_timeout_seconds=1.0,
    )
    anthropic = make_provider(settings, "anthropic", pool_size=2)
    openai = make_provider(settings, "openai", pool_size=2)
    try:
        assert isinstance(anthropic, AnthropicProvider)
        assert isinstance(openai, OpenAIProvider)
        assert (anthropic.name, anthropic.model) == ("anthropic", "claude-haiku-4-5-20251001")
        assert (openai.name, openai.model) == ("openai", "llama3")
        assert openai.complete(REQUEST, timeout=5.0).model == "llama3"
        assert "authorization" not in fake_model.requests[-1].headers
    finally:
        for provider in (anthropic, openai):
            if provider is not None:
                provider.close()
    assert make_provider(settings, "extractive", pool_size=2) is None


# the client pool


def test_concurrent_checkouts_never_exceed_the_pool_size() -> None:
    pool = ClientPool(4)
    lock = threading.Lock()
    held: set[int] = set()
    seen: set[int] = set()
    most = 0

    def borrow() -> None:
        nonlocal most
        for _ in range(20):
            with pool.client(timeout=10.0) as client:
                with lock:
                    assert id(client) not in held
                    held.add(id(client))
                    seen.add(id(client))
                    most = max(most, len(held))
                time.sleep(0.001)
                with lock:
                    held.discard(id(client))

    threads = [threading.Thread(target=borrow) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30.0)
    pool.close()
    assert not any(thread.is_alive() for thread in threads)
    assert most <= 4
    assert len(seen) == pool.size == 4


def test_a_returned_client_is_reused_before_a_new_one_is_made() -> None:
    pool = ClientPool(8)
    try:
        with pool.client() as first:
            pass
        with pool.client() as second:
            pass
        assert first is second
        assert pool.created == 1
    finally:
        pool.close()


def test_a_caller_waits_for_a_free_client_only_as_long_as_its_timeout() -> None:
    pool = ClientPool(1)
    try:
        with pool.client(), pytest.raises(httpx.PoolTimeout), pool.client(timeout=0.05):
            pass
        with pool.client(timeout=0.05):
            pass
    finally:
        pool.close()


def test_a_waiting_caller_gets_the_client_another_returns() -> None:
    pool = ClientPool(1)
    got: list[httpx.Client] = []

    def wait_for_client() -> None:
        with pool.client(timeout=5.0) as client:
            got.append(client)

    try:
        with pool.client() as mine:
            waiter = threading.Thread(target=wait_for_client)
            waiter.start()
            time.sleep(0.05)
            assert got == []
        waiter.join(5.0)
        assert got == [mine]
    finally:
        pool.close()


def test_close_closes_idle_clients_now_and_busy_ones_when_returned() -> None:
    pool = ClientPool(2)
    with pool.client() as one, pool.client() as two:
        pass
    with pool.client() as busy:
        (idle,) = {one, two} - {busy}
        pool.close()
        assert idle.is_closed
        assert not busy.is_closed
    assert busy.is_closed
    with pytest.raises(RuntimeError), pool.client():
        pass


def test_each_pooled_client_holds_at_most_one_connection(fake_model: FakeModelServer) -> None:
    pool = ClientPool(1)
    try:
        for _ in range(3):
            with pool.client(timeout=5.0) as client:
                assert client.get(fake_model.openai_base_url + "/models").status_code == 200
    finally:
        pool.close()
    assert fake_model.connection_count == 1
