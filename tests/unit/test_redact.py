"""Secrets in tool outputs become typed placeholders; what only looks like a secret stays."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tersify.settings import Settings
from tersify.worker.redact import Redactor, Scope, find_secrets
from tests import fakesecrets

BENCH = Path(__file__).resolve().parents[2] / "bench" / "redaction.py"
seeds = st.integers(min_value=0, max_value=2**32 - 1)


@settings(max_examples=150, deadline=None)
@given(seeds, st.sampled_from(tuple(fakesecrets.COMMANDS)))
def test_no_secret_of_a_command_output_survives_redaction(seed: int, command: str) -> None:
    _command, text, secrets = fakesecrets.command_output(random.Random(seed), command)
    redacted = Redactor().redact(text)
    for secret in secrets:
        assert not [part for part in secret.vanish if part in redacted], secret.kind
    assert "[secret:" in redacted


@settings(max_examples=100, deadline=None)
@given(seeds)
def test_shas_uuids_digests_base64_data_and_versions_are_left_alone(seed: int) -> None:
    rng = random.Random(seed)
    makers = (fakesecrets.commit_sha, fakesecrets.uuid, fakesecrets.digest, fakesecrets.blob)
    lines = [f"{maker.__name__}: {maker(rng)}" for maker in (*makers, fakesecrets.version)]
    lines += [f"commit {fakesecrets.commit_sha(rng)}", f'"integrity": "{fakesecrets.digest(rng)}"']
    text = "\n".join(lines)
    assert find_secrets(text) == []
    assert Redactor().redact(text) == text


def test_the_same_secret_gets_the_same_placeholder_within_one_job() -> None:
    rng = random.Random(7)
    one, two = fakesecrets.github_token(rng).text, fakesecrets.github_token(rng).text
    redactor = Redactor()
    first = redactor.redact(f"GITHUB_TOKEN={one}\nOTHER_TOKEN={two}")
    again = redactor.redact(f"the token {one} again")
    assert first == "GITHUB_TOKEN=[secret:github_token#1]\nOTHER_TOKEN=[secret:github_token#2]"
    assert again == "the token [secret:github_token#1] again"
    assert redactor.counts == {"github_token": 3}
    assert one not in repr(redactor)


def test_redacting_a_redacted_text_changes_nothing() -> None:
    _command, text, _secrets = fakesecrets.command_output(random.Random(3), "cat .env")
    once = Redactor().redact(text)
    assert Redactor().redact(once) == once


def test_a_private_key_cut_before_its_end_line_is_redacted_to_where_its_body_stops() -> None:
    secret = fakesecrets.private_key(random.Random(5))
    cut = "\n".join(secret.text.splitlines()[:-2]) + "\n… 40 lines …\ndone\n"
    redacted = Redactor().redact(cut)
    assert not [line for line in secret.vanish[:-1] if line in redacted]
    assert redacted.endswith("… 40 lines …\ndone\n")


def test_the_redact_setting_names_the_scopes_it_applies_to() -> None:
    assert Settings(redact="model").redact == {Scope.MODEL}
    assert Settings(redact="Model, log,result").redact == set(Scope)
    assert Settings(redact="off").redact == frozenset()
    with pytest.raises(ValidationError):
        Settings(redact="off,model")
    with pytest.raises(ValidationError):
        Settings(redact="logs")
    assert Redactor(frozenset()).redact_for(Scope.MODEL, "API_KEY=abcdefgh12") == (
        "API_KEY=abcdefgh12"
    )


def test_the_redaction_bench_quick_mode_ends_with_its_summary_line() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(
        r"redaction: recall=\d\.\d{4} fp_per_100kb=\d+\.\d{3} ms_per_mb=\d+\.\d\d", last
    )


@settings(max_examples=150, deadline=None)
@given(seeds)
def test_no_secret_survives_in_any_hostile_form(seed: int) -> None:
    text, secrets = fakesecrets.hostile_output(random.Random(seed))
    redacted = Redactor().redact(text)
    for secret in secrets:
        assert not [part for part in secret.vanish if part in redacted], secret.kind


@pytest.mark.parametrize(
    "value", ["auth_token", "apiKey", "AuthType", "oauth2_token", "_csrftoken", "self_token"]
)
def test_a_variable_named_for_a_secret_is_left_alone(value: str) -> None:
    text = f"token = {value}\npassword: {value}"
    assert Redactor().redact(text) == text
