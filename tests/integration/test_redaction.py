"""Secrets in a tool output never reach the model, the session log or (when asked) the result."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from tersify.chat.compaction import CompactionMethod
from tersify.client import Producer
from tersify.contract import Method
from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tests import fakesecrets
from tests.fakemodel import FakeModelServer, status
from tests.integration.conftest import provider_env

StartWorker = Callable[..., WorkerProcess]


def leaky_output(seed: int) -> tuple[str, list[str]]:
    """One output per command that leaks secrets, and every secret text in them."""
    rng = random.Random(seed)
    parts, secrets = [], []
    for command in fakesecrets.COMMANDS:
        _command, text, shown = fakesecrets.command_output(rng, command)
        parts.append(f"$ {command}\n{text}")
        secrets += [part for secret in shown for part in secret.vanish]
    return "\n".join(parts), secrets


def leaked(texts: list[str], secrets: list[str]) -> list[str]:
    """The secrets found in any of ``texts``."""
    joined = "\n".join(texts)
    return [secret for secret in secrets if secret in joined]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_no_secret_of_an_output_reaches_the_model_and_the_summary_comes_back(
    provider: str,
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
    settings: Settings,
) -> None:
    output, secrets = leaky_output(11)
    worker = start_worker(**provider_env(fake_model, provider), redact="model,log")
    result = producer.submit(
        session_id="leaky", tool_name="bash", command="env; cat .env", output=output
    ).wait(30)
    assert result.method is Method.LLM, result.fallback_detail
    assert result.provider == provider and result.text
    sent = [json.dumps(request.body) for request in fake_model.requests]
    assert sent and "[secret:" in sent[0]
    assert leaked(sent, secrets) == []
    logs = [p.read_text() for p in Path(settings.session_log_dir).glob("*.jsonl")]
    assert logs and leaked(logs, secrets) == []
    assert leaked([worker.log()], secrets) == []


def test_a_model_error_that_echoes_the_request_leaks_no_secret_into_the_result(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    output, secrets = leaky_output(14)
    fake_model.set_default(status(400, message=output[:3000]))  # a provider quoting its input
    worker = start_worker(**provider_env(fake_model, "anthropic"), model_max_attempts="1")
    result = producer.submit(session_id="leaky-e", tool_name="bash", output=output).wait(30)
    assert result.method is Method.FALLBACK and "[secret:" in (result.fallback_detail or "")
    assert leaked([result.fallback_detail or "", worker.log()], secrets) == []


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_no_secret_in_a_compacted_conversation_reaches_the_model(
    provider: str, fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    output, secrets = leaky_output(12)
    call = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Why does the deploy fail?"},
        {"role": "assistant", "content": "Looking at the environment.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": output[:1800]},
        {"role": "assistant", "content": "The database password is set; checking more."},
        {"role": "user", "content": "Go on."},
        {"role": "assistant", "content": "Done."},
    ]
    # Six messages are fewer than a compaction is worth by default: lower the minimum.
    start_worker(**provider_env(fake_model, provider), compaction_min_messages="2")
    result = producer.compact(
        session_id="leaky-c", messages=messages, protect_first=1, protect_last=1
    ).wait(30)
    assert result.method is CompactionMethod.LLM
    sent = [json.dumps(request.body) for request in fake_model.requests]
    shown = [secret for secret in secrets if secret in output[:1800]]
    assert shown and sent and leaked(sent, shown) == []


def test_under_result_redaction_the_agent_gets_placeholders_not_secrets(
    start_worker: StartWorker, producer: Producer
) -> None:
    output, secrets = leaky_output(13)
    start_worker(redact="model,result")  # no provider: the local extractive summary
    result = producer.submit(session_id="leaky-r", tool_name="bash", output=output).wait(30)
    assert result.method is Method.EXTRACTIVE
    assert leaked([result.text], secrets) == []


def test_no_hostile_form_of_a_secret_reaches_the_model_in_any_field(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    rng = random.Random(28)
    output, shown = fakesecrets.hostile_output(rng)
    token = fakesecrets.github_token(rng)
    password = fakesecrets.worded_password(rng)
    secrets = [part for secret in [*shown, token, password] for part in secret.vanish]
    filler = "".join(f"step {i}: ok\n" for i in range(200))
    start_worker(**provider_env(fake_model, "openai"))
    result = producer.submit(
        session_id="hostile",
        tool_name=f"mcp__vault__read_{token.text}",
        command=f"curl -u deploy:{password.text} https://vault.internal/v1/items",
        query=f"why does DB_PASSWORD={password.text} fail",
        output=filler + output,
    ).wait(30)
    assert result.method is Method.LLM, result.fallback_detail
    sent = [json.dumps(request.body) for request in fake_model.requests]
    assert sent and leaked(sent, secrets) == []
