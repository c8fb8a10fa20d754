"""A setting that cannot work is named in one line; the session-log directory is absolute."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from tersify.errors import ConfigurationError, RedisUnavailableError
from tersify.settings import Settings, debug_requested, settings_problem
from tersify.store.redis_url import failure_reason, shown_url
from tersify.worker.cli.failures import ExitCode, explain
from tersify.worker.model.providers import kind


def problem(**values: object) -> str:
    with pytest.raises(ValidationError) as caught:
        Settings(**values)  # type: ignore[arg-type]
    return settings_problem(caught.value)


def test_a_bad_value_is_named_by_its_variable_with_what_it_may_be() -> None:
    assert problem(worker_pool="fork") == (
        "TERSIFY_WORKER_POOL=fork: input should be 'threads', 'prefork', 'solo' or 'gevent'"
    )


def test_an_unknown_provider_is_named_with_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as caught:
        kind("claude", "TERSIFY_SUMMARY_PROVIDER")
    assert str(caught.value) == (
        "TERSIFY_SUMMARY_PROVIDER=claude: no such provider (known: anthropic, extractive, openai)"
    )


def test_a_bad_provider_setting_is_named_by_its_variable() -> None:
    settings = Settings(openai_response_format="xml", openai_api_key="sk-secret-0123456789")
    with pytest.raises(ConfigurationError) as caught:
        kind("openai").config(settings)
    assert str(caught.value).startswith("TERSIFY_OPENAI_RESPONSE_FORMAT=xml: input should be ")
    assert "sk-secret" not in str(caught.value)


@given(secret=st.from_regex(r"sk-[A-Za-z0-9]{20,40}", fullmatch=True))
def test_a_secret_is_never_shown_in_the_line(secret: str) -> None:
    line = problem(redis_pool_size="many", openai_api_key=123, api_tokens=[secret])
    assert line.startswith("TERSIFY_REDIS_POOL_SIZE=many: ")
    assert "TERSIFY_API_TOKENS: " in line and secret not in line


def test_the_two_output_caps_are_checked_together() -> None:
    assert problem(max_output_bytes=4096, max_stored_output_bytes=2048) == (
        "TERSIFY_MAX_STORED_OUTPUT_BYTES (2048) must be at least TERSIFY_MAX_OUTPUT_BYTES (4096)"
    )


def test_the_session_log_directory_is_absolute_per_user_and_follows_xdg(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    assert Settings().session_log_dir == Path.home() / ".local/state/tersify/sessions"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert Settings().session_log_dir == tmp_path / "tersify" / "sessions"
    assert Settings(session_log_dir="~/logs").session_log_dir == Path.home() / "logs"
    assert problem(session_log_dir="logs").startswith("TERSIFY_SESSION_LOG_DIR=logs: must be")


@pytest.mark.parametrize(
    ("value", "debug"), [("1", True), ("true", True), ("0", False), ("maybe", False), (None, False)]
)
def test_tersify_debug_is_read_alone_and_an_odd_value_means_no(
    monkeypatch: pytest.MonkeyPatch, value: str | None, debug: bool
) -> None:
    monkeypatch.setenv("TERSIFY_SUMMARY_PROVIDER", "claude")  # the other settings are broken
    if value is None:
        monkeypatch.delenv("TERSIFY_DEBUG", raising=False)
    else:
        monkeypatch.setenv("TERSIFY_DEBUG", value)
    assert debug_requested() is debug


def test_a_redis_url_shows_no_password_and_a_refusal_says_so() -> None:
    assert shown_url("redis://user:pw@h:1/0") == "redis://***@h:1/0"
    client = redis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
    with pytest.raises(redis.ConnectionError) as caught:
        client.ping()
    assert failure_reason(caught.value) == "connection refused"
    try:
        try:
            client.ping()
        except redis.ConnectionError:
            raise RedisUnavailableError("could not store the job") from None
    except RedisUnavailableError as exc:
        line, code = explain(exc, "redis://:pw@127.0.0.1:1/0")
    assert code is ExitCode.UNREACHABLE
    assert line.startswith("cannot reach Redis at redis://***@127.0.0.1:1/0 (connection refused)")
