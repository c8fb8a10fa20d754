"""Per-job options against their ceilings, and the webhook signature a receiver checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr
from standardwebhooks.webhooks import Webhook

from tersify.client.jobs import build_job
from tersify.client.options import callback_allowed, summarizes
from tersify.contract import JobOptions
from tersify.errors import InvalidJobError
from tersify.settings import Settings
from tersify.store.webhooks import (
    ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    headers,
    verify,
)
from tersify.worker.summarize.summarizer import job_settings

SECRET = SecretStr("whsec-test-0123456789abcdef")
SETTINGS = Settings(
    job_max_budget_chars=5000,
    job_max_summary_chars=1000,
    job_models="small-model,other-model",
    webhook_allowed_urls="https://hooks.example.com,http://127.0.0.1:8080/hooks/",
    webhook_secret=SECRET,
)
OUTPUT = "x" * 5000


def job(**options: object):
    """A job with ``options`` built as the producer builds it."""
    return build_job(SETTINGS, session_id="s", tool_name="bash", output=OUTPUT, options=options)


@given(st.integers(-10, 7000))
def test_budget_chars_is_taken_within_200_and_its_ceiling_and_refused_outside(n: int) -> None:
    if 200 <= n <= SETTINGS.job_max_budget_chars:
        built = job(budget_chars=n)
        assert job_settings(SETTINGS, built).local_budget_chars == n
    else:
        with pytest.raises(InvalidJobError):
            job(budget_chars=n)


@given(st.integers(-10, 1500))
def test_max_summary_chars_is_taken_within_50_and_its_ceiling_and_refused_outside(n: int) -> None:
    if 50 <= n <= SETTINGS.job_max_summary_chars:
        assert job_settings(SETTINGS, job(max_summary_chars=n)).max_summary_chars == n
    else:
        with pytest.raises(InvalidJobError, match="max_summary_chars"):
            job(max_summary_chars=n)


def test_a_job_without_options_runs_on_the_settings_as_they_are() -> None:
    plain = build_job(SETTINGS, session_id="s", tool_name="bash", output=OUTPUT)
    assert plain.options is None
    assert job_settings(SETTINGS, plain) is SETTINGS


@pytest.mark.parametrize(
    "model", ["small-model", "claude-haiku-4-5-20251001", "gpt-4.1-mini", "gpt-4.1-mini-2025-04-14"]
)
def test_a_listed_or_priced_model_is_allowed(model: str) -> None:
    assert job(model=model).options == JobOptions(model=model)


@pytest.mark.parametrize("model", ["gpt-5-huge", "small model", ""])
def test_any_other_model_is_refused(model: str) -> None:
    with pytest.raises(InvalidJobError):
        job(model=model)


def test_a_model_a_provider_setting_names_is_allowed() -> None:
    named = SETTINGS.model_copy(update={"openai_model": "local-gguf"})
    options = {"model": "local-gguf"}
    built = build_job(named, session_id="s", tool_name="bash", output=OUTPUT, options=options)
    assert built.options == JobOptions(model="local-gguf")


def test_summarize_false_hands_any_output_back_without_a_job() -> None:
    assert summarizes(SETTINGS, job())
    assert not summarizes(SETTINGS, job(summarize=False))


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://hooks.example.com", True),
        ("https://hooks.example.com/a/b?x=1", True),
        ("https://hooks.example.com.evil.net/", False),
        ("https://hooks.example.comx/", False),
        ("http://hooks.example.com/", False),
        ("http://127.0.0.1:8080/hooks/done", True),
        ("http://127.0.0.1:8080/other", False),
        ("file:///etc/passwd", False),
    ],
)
def test_a_callback_url_must_start_with_an_allowed_prefix_on_a_path_boundary(
    url: str, allowed: bool
) -> None:
    assert callback_allowed(SETTINGS, url) is allowed
    if allowed:
        assert job(callback_url=url).options is not None
    else:
        with pytest.raises(InvalidJobError, match="callback_url"):
            job(callback_url=url)


def test_a_callback_url_is_refused_when_no_secret_would_sign_it() -> None:
    unsigned = SETTINGS.model_copy(update={"webhook_secret": None})
    with pytest.raises(InvalidJobError, match="TERSIFY_WEBHOOK_SECRET"):
        build_job(
            unsigned,
            session_id="s",
            tool_name="b",
            output="x",
            options={"callback_url": "https://hooks.example.com/x"},
        )


@given(st.text(max_size=200), st.integers(1_600_000_000, 2_000_000_000))
def test_a_signature_verifies_only_its_own_id_body_timestamp_and_secret(text: str, ts: int) -> None:
    body = text.encode()
    signed = headers(SECRET, "msg_1", body, now=ts)
    assert signed[SIGNATURE_HEADER].startswith("v1,")
    assert verify(SECRET, body, signed, now=ts + 10)
    assert not verify(SECRET, body + b"!", signed, now=ts)
    assert not verify(SECRET, body, {**signed, TIMESTAMP_HEADER: str(ts + 1)}, now=ts)
    assert not verify(SECRET, body, {**signed, ID_HEADER: "msg_2"}, now=ts)  # a replay, new id
    assert not verify(SecretStr("another"), body, signed, now=ts)
    assert not verify(SECRET, body, signed, now=ts + 301)  # a replay, too late
    assert not verify(SECRET, body, {**signed, TIMESTAMP_HEADER: "not-a-number"}, now=ts)


def test_a_signature_is_the_standard_webhooks_one_a_receiver_library_verifies() -> None:
    body = b'{"job_id": "j1"}'
    signed = headers(SECRET, "msg_1", body)
    secret = SECRET.get_secret_value().encode()
    assert Webhook(secret).verify(body, signed) == {"job_id": "j1"}


@given(
    st.dictionaries(
        st.sampled_from([ID_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER, "Webhook-Signature"]),
        st.one_of(
            st.text(max_size=60),
            st.text(alphabet="0123456789", min_size=13, max_size=401),
            st.just("v1,é"),
            st.just("v1"),
            st.just("v1,not base64!"),
        ),
    ),
    st.binary(max_size=40),
)
def test_verify_is_false_on_any_malformed_input_never_an_error(
    received: dict[str, str], body: bytes
) -> None:
    assert verify(SECRET, body, received) is False


def test_the_webhook_secret_never_shows_in_the_settings_repr() -> None:
    assert SECRET.get_secret_value() not in repr(SETTINGS)
    assert SECRET.get_secret_value() not in str(SETTINGS.model_dump())
