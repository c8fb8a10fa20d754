"""The whole job life: producer → Redis → real Celery worker → fake model → result."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tersify.classify import classify
from tersify.client import Producer
from tersify.client.jobs import build_job
from tersify.contract import (
    FallbackReason,
    Method,
    PendingSummary,
    Queue,
    SummaryResult,
    ToolType,
)
from tersify.settings import Settings
from tersify.store import keys, payloads
from tersify.store.commands import execute
from tersify.store.publisher import push
from tersify.store.wire import SUMMARIZE_TASK, SummaryMessage
from tersify.worker.cli.demo import Example, load_examples
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.store.sessionlog import read_entries, session_file
from tests.fakemodel import FakeModelServer, hang, malformed, ok, oversized, status
from tests.fakemodel import empty as empty_answer
from tests.helpers import wait_for
from tests.integration.conftest import hanging_env, provider_env, wait_for_cached_summaries

EXAMPLES = load_examples()
StartWorker = Callable[..., WorkerProcess]


def example_of(tool_type: ToolType) -> Example:
    """The bundled example output of one tool type."""
    for ex in EXAMPLES:
        if classify(ex.tool_name, ex.command, ex.output) is tool_type:
            return ex
    raise AssertionError(f"no bundled example of {tool_type}")


def test_the_bundled_examples_cover_every_tool_type() -> None:
    kinds = {classify(ex.tool_name, ex.command, ex.output) for ex in EXAMPLES}
    assert kinds == set(ToolType)


def test_a_short_output_passes_through_without_a_job(producer: Producer, redis_client) -> None:
    handle = producer.submit(session_id="s1", tool_name="bash", output="ok\n" * 10)
    result = handle.wait(0.1)
    assert result.method is Method.PASSTHROUGH
    assert result.text == "ok\n" * 10
    # nothing enqueued, nothing stored: only the output, on its way to the session log
    waiting = {keys.PASSTHROUGH_LOG, keys.PASSTHROUGH_SIZES, keys.PASSTHROUGH_BYTES}
    owned = {keys.passthrough_entry(handle.job_id), keys.session("s1")}
    assert set(redis_client.keys("*")) == waiting | owned


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_every_tool_type_is_summarized_by_the_model_in_both_wire_formats(
    provider: str, fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    start_worker(**provider_env(fake_model, provider))
    handles = {
        kind: producer.submit(
            session_id=f"types-{provider}",
            tool_name=ex.tool_name,
            output=ex.output,
            command=ex.command,
            query=ex.query,
        )
        for kind in ToolType
        for ex in [example_of(kind)]
    }
    path = "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"
    for kind, handle in handles.items():
        result = handle.wait(30)
        assert result.method is Method.LLM, result.fallback_detail
        assert result.tool_type is kind
        assert result.provider == provider
        assert result.model
        assert result.input_tokens and result.output_tokens
        assert 0 < result.chars_out < result.chars_in
    sent = [r for r in fake_model.requests if r.path == path]
    assert len(sent) == len(ToolType)


def test_the_summary_provider_falls_back_to_the_main_provider(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    env = provider_env(fake_model, "openai")
    del env["summary_provider"]
    start_worker(main_provider="openai", **env)
    ex = example_of(ToolType.COMMAND_OUTPUT)
    result = producer.submit(session_id="main", tool_name=ex.tool_name, output=ex.output).wait(30)
    assert (result.method, result.provider) == (Method.LLM, "openai")
    assert [r.path for r in fake_model.requests] == ["/v1/chat/completions"]


def test_without_a_provider_the_extractive_default_answers(
    start_worker: StartWorker, producer: Producer
) -> None:
    start_worker()
    for ex in EXAMPLES:
        result = producer.submit(
            session_id="extractive",
            tool_name=ex.tool_name,
            output=ex.output,
            command=ex.command,
            query=ex.query,
        ).wait(30)
        assert result.method is Method.EXTRACTIVE
        assert 0 < result.chars_out <= producer.settings.local_budget_chars


FAULTS = [
    ("FAULT-HANG", hang(30), FallbackReason.TIMEOUT),
    ("FAULT-429", status(429, retry_after=1), FallbackReason.RATE_LIMITED),
    ("FAULT-500", status(500), FallbackReason.SERVER_ERROR),
    ("FAULT-MALFORMED", malformed(), FallbackReason.MALFORMED),
    ("FAULT-EMPTY", empty_answer(), FallbackReason.EMPTY),
    ("FAULT-OVERSIZED", oversized(5000), FallbackReason.OVERSIZED),
]


def test_every_model_failure_falls_back_with_its_reason(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    for marker, behaviour, _ in FAULTS:
        fake_model.add_rule(marker, behaviour)
    start_worker(**provider_env(fake_model, "anthropic"))
    ex = example_of(ToolType.COMMAND_OUTPUT)
    handles = [
        (
            reason,
            producer.submit(
                session_id=f"fault-{reason.value}",
                tool_name="bash",
                output=f"{marker}\n{ex.output}",
                command="pytest",
            ),
        )
        for marker, _, reason in FAULTS
    ]
    for reason, handle in handles:
        result = handle.wait(30)
        assert (result.method, result.fallback_reason) == (Method.FALLBACK, reason)
        assert (
            "FAILED tests/test_totals.py::test_parse_amount_handles_european_format" in result.text
        )
        assert result.chars_out <= producer.settings.local_budget_chars


def test_a_job_past_its_deadline_falls_back_with_reason_deadline(
    fake_model: FakeModelServer, start_worker: StartWorker, settings: Settings
) -> None:
    fake_model.set_default(hang(30))
    start_worker(**provider_env(fake_model, "anthropic"))
    ex = example_of(ToolType.COMMAND_OUTPUT)
    with Producer(settings.model_copy(update={"job_deadline_seconds": 0.5})) as producer:
        result = producer.submit(session_id="late", tool_name="bash", output=ex.output).wait(30)
    assert (result.method, result.fallback_reason) == (Method.FALLBACK, FallbackReason.DEADLINE)


def test_the_session_log_holds_every_full_output_and_result(
    start_worker: StartWorker, producer: Producer, settings: Settings
) -> None:
    start_worker()
    submitted = {}
    for ex in EXAMPLES:
        handle = producer.submit(session_id="logged/1", tool_name=ex.tool_name, output=ex.output)
        handle.wait(30)
        submitted[handle.job_id] = ex.output
    path = session_file(settings.session_log_dir, "logged/1")

    def logged() -> list[dict]:
        return list(read_entries(path)) if path.exists() else []

    wait_for(lambda: sum(e["kind"] == "result" for e in logged()) == len(submitted), timeout=60)
    entries = logged()
    outputs = {e["job_id"]: e["output"] for e in entries if e["kind"] == "output"}
    results = {e["job_id"] for e in entries if e["kind"] == "result"}
    assert outputs == submitted
    assert results == set(submitted)


def test_a_worker_killed_mid_job_still_completes_the_job_once(
    fake_model: FakeModelServer, start_worker: StartWorker, settings: Settings, redis_client
) -> None:
    env = hanging_env(fake_model, "anthropic")
    first = start_worker(**env)
    ex = example_of(ToolType.COMMAND_OUTPUT)
    slow = settings.model_copy(update={"job_deadline_seconds": 60, "visibility_timeout_seconds": 3})
    with Producer(slow) as producer:
        handle = producer.submit(session_id="killed", tool_name="bash", output=ex.output)
        wait_for(lambda: fake_model.request_count >= 1, timeout=60)
        first.kill()
        fake_model.set_default(ok())
        start_worker(**env)
        result = handle.wait(45)
    assert result.method is Method.LLM, (
        result.fallback_reason,
        result.started_at,
        result.queued_at,
    )
    log = session_file(settings.session_log_dir, "killed")

    def logged_results() -> int:
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        return sum(1 for e in lines if e["kind"] == "result")

    wait_for(lambda: logged_results() >= 1, timeout=60)  # the log line follows the stored result
    assert logged_results() == 1
    assert redis_client.llen(f"tersify:result:{handle.job_id}") == 1


def test_batch_jobs_go_to_the_batch_queue_and_never_touch_the_gate(
    start_worker: StartWorker, producer: Producer
) -> None:
    start_worker()
    ex = example_of(ToolType.SEARCH_RESULTS)
    handle = producer.submit(
        session_id="batch", tool_name="rg", output=ex.output, queue=Queue.BATCH
    )
    assert producer.gate.is_open("batch")
    assert handle.wait(30).method is Method.EXTRACTIVE


def test_the_session_log_file_name_cannot_escape_its_directory(tmp_path: Path) -> None:
    path = session_file(tmp_path, "../../etc/passwd")
    assert path.parent == tmp_path


def test_transient_model_failures_are_retried_and_the_model_still_answers(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    fake_model.script([status(503), status(429, retry_after=0.2)])
    start_worker(**provider_env(fake_model, "openai"))
    ex = example_of(ToolType.SEARCH_RESULTS)
    result = producer.submit(session_id="retry", tool_name="rg", output=ex.output).wait(30)
    assert result.method is Method.LLM
    assert fake_model.request_count == 3


def test_a_client_error_is_not_retried(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    fake_model.set_default(status(400))
    start_worker(**provider_env(fake_model, "openai"))
    ex = example_of(ToolType.SEARCH_RESULTS)
    result = producer.submit(session_id="no-retry", tool_name="rg", output=ex.output).wait(30)
    assert (result.method, result.fallback_reason) == (Method.FALLBACK, FallbackReason.CLIENT_ERROR)
    assert fake_model.request_count == 1


def test_a_dead_api_opens_the_circuit_and_one_probe_closes_it(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    fake_model.set_default(status(503))
    start_worker(
        **provider_env(fake_model, "openai"),
        circuit_failure_threshold="2",
        circuit_cooldown_seconds="1",
        model_max_attempts="1",
    )
    ex = example_of(ToolType.SEARCH_RESULTS)

    def run(session: str) -> tuple[Method, FallbackReason | None]:
        result = producer.submit(session_id=session, tool_name="rg", output=ex.output).wait(30)
        return result.method, result.fallback_reason

    assert run("dead-1") == (Method.FALLBACK, FallbackReason.SERVER_ERROR)
    assert run("dead-2") == (Method.FALLBACK, FallbackReason.SERVER_ERROR)
    assert run("dead-3") == (Method.FALLBACK, FallbackReason.CIRCUIT_OPEN)
    assert fake_model.request_count == 2  # the open circuit spared the dead API
    fake_model.set_default(ok())
    time.sleep(1.2)  # the cool-down, after which one probe may go out
    assert run("alive") == (Method.LLM, None)


def test_when_the_summary_provider_is_down_the_failover_provider_answers(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    fake_model.add_rule("claude-haiku", status(503))  # only the Anthropic requests name it
    start_worker(
        **provider_env(fake_model, "anthropic"), failover_provider="openai", model_max_attempts="1"
    )
    ex = example_of(ToolType.COMMAND_OUTPUT)
    result = producer.submit(session_id="failover", tool_name="bash", output=ex.output).wait(30)
    assert (result.method, result.provider) == (Method.LLM, "openai")
    assert [r.path for r in fake_model.requests] == ["/v1/messages", "/v1/chat/completions"]


def test_an_identical_output_reuses_the_cached_model_summary(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer, redis_client: Any
) -> None:
    start_worker(**provider_env(fake_model, "anthropic"))
    ex = example_of(ToolType.COMMAND_OUTPUT)

    def run(session: str, query: str | None) -> SummaryResult:
        return producer.submit(
            session_id=session, tool_name="bash", output=ex.output, query=query
        ).wait(30)

    first = run("c-1", "what fails")
    wait_for_cached_summaries(redis_client, 1)
    again = run("c-2", "what fails")
    other = run("c-3", "what passes")  # another intent is another summary
    assert (first.method, again.method, other.method) == (Method.LLM, Method.CACHE, Method.LLM)
    assert again.text == first.text and again.job_id != first.job_id
    assert fake_model.request_count == 2


def _publish_by_hand(
    producer: Producer, redis_client: Any, job_id: str, message: Callable[..., dict[str, Any]]
) -> None:
    """Stage a job's payload and gate hold as a producer does, then publish ``message(job,
    digest, token)`` as its queue entry: what another producer version would have sent."""
    grep = example_of(ToolType.SEARCH_RESULTS)
    job = build_job(
        producer.settings, session_id="by-hand", tool_name=grep.tool_name, output=grep.output
    )
    job = job.model_copy(update={"job_id": job_id})
    digest, blob = payloads.encode(job.output)
    redis_client.set(keys.payload(digest), blob, ex=600)
    token = producer.gate.close_for("by-hand", job_id)
    entry = push(SUMMARIZE_TASK, message(job, digest, token), Queue.INTERACTIVE, job_id)
    execute(redis_client, entry)


def test_a_worker_summarizes_a_message_queued_by_a_producer_of_the_first_message_version(
    start_worker: StartWorker, producer: Producer, redis_client
) -> None:
    start_worker()

    def version_one(job: PendingSummary, digest: str, token: int) -> dict[str, Any]:
        header = job.model_dump(mode="json", exclude={"output"})
        return {"schema_version": 1, "job": header, "payload": digest, "gate_token": token}

    _publish_by_hand(producer, redis_client, "first-version-job", version_one)
    result = producer.wait("first-version-job", timeout=60)
    assert result.tool_type is ToolType.SEARCH_RESULTS  # classified by the worker
    assert producer.gate.wait_open("by-hand", timeout=30)


def test_a_worker_takes_the_tool_type_the_producer_classified(
    start_worker: StartWorker, producer: Producer, redis_client
) -> None:
    start_worker()

    def classified_as_a_file(job: PendingSummary, digest: str, token: int) -> dict[str, Any]:
        message = SummaryMessage.for_job(job, digest, token, ToolType.FILE_CONTENT)
        return message.model_dump(mode="json")

    _publish_by_hand(producer, redis_client, "typed-version-job", classified_as_a_file)
    result = producer.wait("typed-version-job", timeout=60)
    assert result.tool_type is ToolType.FILE_CONTENT  # not sniffed again: grep output, read as sent
    assert producer.gate.wait_open("by-hand", timeout=30)
