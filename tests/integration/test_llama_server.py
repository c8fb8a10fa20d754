"""The model path against a real inference server: llama-cpp-python's OpenAI-compatible server
running SmolLM2-135M on loopback (``make llama``). Real tokenization, real constrained JSON,
real imperfect answers: the server refuses ``json_schema`` and is asked again in the next
format; a request past its context window is refused, the window learned and the request
sized to fit; a tiny model's answers are refused, corrected or fall back for what they said.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tersify.client import Producer
from tersify.contract import FallbackReason, Method
from tersify.settings import Settings
from tersify.worker.cli.demo import load_examples
from tersify.worker.model.providers import AnswerFormat, ModelRequest, OpenAIProvider, compat
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import tersify
from tests.llama import LlamaServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SLOW = {
    "model_timeout_seconds": "300",
    "job_deadline_seconds": "600",
    "gate_max_seconds": "900",
    "gate_lease_seconds": "60",
}
"""Room for a 135M model on two busy cores: a request takes seconds to a minute."""
ANSWERED = {
    FallbackReason.UNGROUNDED,
    FallbackReason.MALFORMED,
    FallbackReason.OVERSIZED,
    FallbackReason.EMPTY,
}
"""Fallbacks that mean the server answered and the answer was refused for what it said."""
COLOR = AnswerFormat(
    "color",
    "A color and why.",
    {
        "type": "object",
        "properties": {"color": {"type": "string"}},
        "required": ["color"],
        "additionalProperties": False,
    },
)


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One server for the module, with a 2,048-token context."""
    server = LlamaServer(tmp_path_factory.mktemp("llama")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def no_memory() -> Iterator[None]:
    """Each test meets the server as a new process would."""
    compat.forget()
    yield
    compat.forget()


def provider_env(server: LlamaServer, **more: str) -> dict[str, str]:
    """Settings that send summaries to the local server (no key: it is on this machine)."""
    return {
        "summary_provider": "openai",
        "openai_base_url": server.base_url,
        "openai_model": "smollm2",
        **SLOW,
        **more,
    }


def test_the_server_refuses_json_schema_and_answers_in_json_constrained_to_the_schema(
    llama: LlamaServer,
) -> None:
    provider = OpenAIProvider(None, llama.base_url, "smollm2", connect_timeout=5, pool_size=1)
    request = ModelRequest(
        system="You name colors.", user="Name one color.", max_tokens=24, answer_format=COLOR
    )
    try:
        completion = provider.complete(request, timeout=300)
    finally:
        provider.close()
    assert set(json.loads(completion.text)) == {"color"}  # the grammar held the tiny model
    assert completion.input_tokens and completion.input_tokens > 10  # its own tokenizer counted
    remembered = compat.traits(llama.base_url)
    assert remembered.response_format == "json_object"


def test_a_request_past_the_context_window_teaches_it_and_the_next_one_fits(
    llama: LlamaServer,
) -> None:
    provider = OpenAIProvider(None, llama.base_url, "smollm2", connect_timeout=5, pool_size=1)
    long = ModelRequest(system="Summarize.", user="word " * 4000, max_tokens=16)
    try:
        with pytest.raises(Exception) as caught:
            provider.complete(long, timeout=300)
        error = caught.value
        assert getattr(error, "reason", None) is FallbackReason.CONTEXT_EXCEEDED, error
        assert "2,048 tokens" in str(error)
        room = provider.fitting_chars(long)
        assert room is not None and 0 < room < len(long.user)
        fitted = ModelRequest(system="Summarize.", user=long.user[: room - 1], max_tokens=16)
        assert provider.complete(fitted, timeout=300).input_tokens
    finally:
        provider.close()


def test_a_job_runs_on_the_real_server_to_a_summary_or_a_fallback_for_what_it_answered(
    llama: LlamaServer,
    settings: Settings,
    start_worker: Callable[..., WorkerProcess],
    tmp_path: Path,
) -> None:
    # the window as configured: read from the busy server instead, a slow answer leaves it
    # unknown and the first request may be refused (the test above covers learning it)
    worker = start_worker(**provider_env(llama, openai_context_tokens=str(llama.n_ctx)))
    example = next(ex for ex in load_examples() if ex.tool_name == "bash")
    slow = settings.model_copy(update=SLOW)  # the producer's leases as the worker renews them
    with Producer(slow) as producer:
        handle = producer.submit(
            session_id="llama",
            tool_name=example.tool_name,
            output=example.output,
            command=example.command,
        )
        result = handle.wait(660)
    log = worker.log_path.read_text()
    # json_schema refused once (by the start-up probe of the local server), then remembered
    assert log.count('"model_response_format_refused"') == 1
    assert result.method in (Method.LLM, Method.FALLBACK), result
    if result.method is Method.FALLBACK:
        assert result.fallback_reason in ANSWERED, (result.fallback_reason, result.fallback_detail)
        assert result.provider == "openai"
    else:
        assert result.provider == "openai" and result.input_tokens and result.output_tokens
        assert len(result.text) < len(example.output)
    assert '"summary_request_refitted"' in log or '"context_exceeded"' not in log


def test_doctor_names_the_format_a_local_server_takes_and_its_context_window(
    llama: LlamaServer, settings: Settings
) -> None:
    env = provider_env(llama, openai_context_tokens="2048")
    done = tersify(settings, "doctor", "--json", timeout=400, **env)
    found = [json.loads(line) for line in done.stdout.splitlines()]
    [model] = [f for f in found if f["check"] == "model API"]
    assert model["level"] == "ok", model
    assert "json_object (json_schema refused)" in model["detail"]
    assert "2,048 tokens" in model["detail"]
