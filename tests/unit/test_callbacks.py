"""The callback URL policy: generated URLs never escape the allow-list, whatever their spelling."""

from __future__ import annotations

from contextlib import suppress
from urllib.parse import unquote

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.store.callbacks import CallbackURLError, checked, parse
from tests.callback_urls import ALLOWED_HOST, callback_urls

PORT = 8080
ALLOWED = f"http://{ALLOWED_HOST}:{PORT}/hooks/"


def sent_segments(url: str) -> list[str]:
    """The path segments an HTTP client sends for ``url``, decoded twice (as lax servers do)."""
    raw = httpx.URL(url).raw_path.decode("ascii").split("?")[0]
    return [unquote(unquote(part)) for part in raw.split("/")[1:]]


@settings(max_examples=2000)
@given(callback_urls(PORT))
def test_no_generated_url_escapes_the_allowed_prefix(url: str) -> None:
    try:
        found = str(checked(ALLOWED, url))
    except CallbackURLError:
        return
    sent = httpx.URL(found)
    assert (sent.scheme, sent.host, sent.port or 80) == ("http", ALLOWED_HOST, PORT)
    segments = sent_segments(found)
    assert segments[0] == "hooks"
    assert not any(s.split(";")[0] in (".", "..") or "/" in s or "\\" in s for s in segments)
    assert not any(ord(c) < 0x20 or c == "\x7f" for c in found)


@given(st.text(max_size=300))
def test_any_text_is_a_url_or_a_refusal_never_another_error(text: str) -> None:
    with suppress(CallbackURLError):
        checked(ALLOWED, text)


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("HTTP://127.0.0.1:8080/hooks/x", "http://127.0.0.1:8080/hooks/x"),
        ("http://Hooks.Example.COM./a", "http://hooks.example.com/a"),
        ("http://bücher.example/a", "http://xn--bcher-kva.example/a"),
        ("http://[0:0::1]:443/a", "http://[::1]:443/a"),
        ("https://example.com:443", "https://example.com/"),
    ],
)
def test_a_url_is_compared_in_its_normal_form(url: str, normal: str) -> None:
    assert str(parse(url)) == normal


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hooks/../admin",
        "http://127.0.0.1:8080/hooks/%2e%2e/admin",
        "http://127.0.0.1:8080/hooks/%252e%252e/admin",
        "http://127.0.0.1:8080/hooks/..;/admin",
        "http://127.0.0.1:8080/hooks/a%2fb",
        "http://127.0.0.1:8080/hooks/\n",
        "http://127.0.0.1@evil.example:8080/hooks/",
        "http://0x7f.1:8080/hooks/",
        "http://127.0.0.1:8080/hooksx",
        "http://127.0.0.1:8081/hooks/",
        "https://127.0.0.1:8080/hooks/",
    ],
)
def test_an_escape_is_refused(url: str) -> None:
    with pytest.raises(CallbackURLError):
        checked(ALLOWED, url)
