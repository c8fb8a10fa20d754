"""An output past one request's window through a real worker, in either wire format: read in
windows and merged, the result saying which windows the model read, which lines no model
read (named in the summary with how to read them), and what every request cost."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tersify.client import Producer
from tersify.contract import JobOptions, Method
from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, quoting, status
from tests.helpers import wait_for
from tests.integration.conftest import hanging_env, provider_env

StartWorker = Callable[..., WorkerProcess]
LOG = [
    f"2026-11-02T10:{n // 60 % 60:02d}:{n % 60:02d} INFO worker step {n} ok" for n in range(3000)
]
LOG[1400] = "2026-11-02T10:23:20 ERROR worker step 1400: connection refused by db-7:5432"
OUTPUT = "\n".join(LOG)
ENV = {
    "model_window_chars": "20000",
    "model_max_attempts": "1",
    "model_prices": "fake-model=1.0/5.0,claude-haiku-4-5-20251001=1.0/5.0,gpt-4.1-mini=1.0/5.0",
}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_long_output_is_read_in_windows_and_the_result_says_how(
    provider: str,
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
) -> None:
    start_worker(**provider_env(fake_model, provider), **ENV)
    fake_model.set_default(quoting("ERROR", prose="One step failed: the db refused."))
    fake_model.add_rule("are shown part 2,", status(503))
    handle = producer.submit(
        session_id=f"windows-{provider}",
        tool_name="bash",
        command="tail -n 3000 worker.log",
        output=OUTPUT,
        query="why did the worker fail",
        options=JobOptions(model_read_max_chars=60_000),
    )
    result = handle.wait(60)
    assert result.method is Method.LLM, result.fallback_detail
    windows = result.windows
    assert len(windows) >= 3 and sum(w.chars for w in windows) <= 60_000
    assert [w.read_by for w in windows].count("extractive") == 1 and windows[1].read_by != "model"
    # every window's request and the merge were sent; all but the failed window's answered
    assert len(fake_model.requests) == len(windows) + 1
    assert result.model_requests == len(windows)
    assert result.unread_lines and result.output_ref is not None
    first = result.unread_lines[0].start
    assert f"tersify output {result.output_ref} --from {first}" in result.text
    assert f"1401|{LOG[1400]}" in result.text.split("\n")
    assert result.input_tokens is not None and result.output_tokens is not None
    assert result.cost_usd == pytest.approx(
        (result.input_tokens * 1.0 + result.output_tokens * 5.0) / 1e6
    )
    read = {n for w in windows for n in range(w.lines.start, w.lines.end + 1)}
    assert 1401 in read


def test_a_worker_killed_while_its_windows_are_read_loses_nothing(
    fake_model: FakeModelServer, start_worker: StartWorker, settings: Settings, redis_client: Any
) -> None:
    env = hanging_env(fake_model, "openai", **ENV)
    first = start_worker(**env)
    slow = settings.model_copy(update={"job_deadline_seconds": 90, "visibility_timeout_seconds": 3})
    with Producer(slow) as producer:
        handle = producer.submit(session_id="windows-killed", tool_name="bash", output=OUTPUT)
        wait_for(lambda: fake_model.request_count >= 3, timeout=60)  # windows in flight
        first.kill()
        fake_model.set_default(quoting("ERROR"))
        start_worker(**env)
        result = handle.wait(60)
        assert producer.gate.wait_open("windows-killed", timeout=30)
    assert result.method is Method.LLM, result.fallback_detail
    assert len(result.windows) >= 3 and all(w.read_by == "model" for w in result.windows)
    assert redis_client.llen(f"tersify:result:{handle.job_id}") == 1
