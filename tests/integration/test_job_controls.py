"""Per-job options, cancel and webhooks, end to end: real Redis, workers, API, loopback receiver."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import redis
from pydantic import SecretStr

from tersify.client import Producer
from tersify.client.cancel import JobState
from tersify.contract import FallbackReason, Method, SummaryResult
from tersify.settings import Settings
from tersify.store import keys
from tersify.store.webhooks import ID_HEADER, verify
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, ok
from tests.helpers import tersify, wait_for
from tests.integration.conftest import provider_env
from tests.integration.test_api import TOKENS, ApiServer, client, summary_body

StartWorker = Callable[..., WorkerProcess]
OUTPUT = "".join(f"{i:04d} INFO request {i} served in {i % 97} ms\n" for i in range(600))
SECRET = "whsec-integration-0123456789abcdef"


class Receiver:
    """A loopback webhook receiver answering scripted statuses (then 200), recording each POST."""

    def __init__(self, statuses: list[int]) -> None:
        self.posts: list[tuple[dict[str, str], bytes]] = []
        self._statuses = list(statuses)
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with receiver._lock:
                    receiver.posts.append((dict(self.headers), body))
                    code = receiver._statuses.pop(0) if receiver._statuses else 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hooks/"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def receiver() -> Iterator[Callable[[list[int]], Receiver]]:
    """Start loopback webhook receivers; all are closed when the test ends."""
    made: list[Receiver] = []

    def make(statuses: list[int]) -> Receiver:
        made.append(Receiver(statuses))
        return made[-1]

    yield make
    for one in made:
        one.close()


def hooked(settings: Settings, url: str) -> Settings:
    """``settings`` with webhooks on for ``url`` (what the producer and the worker both read)."""
    return settings.model_copy(
        update={"webhook_allowed_urls": url, "webhook_secret": SECRET, "webhook_max_attempts": 3}
    )


def webhook_env(url: str) -> dict[str, str]:
    """The worker's environment for webhooks to ``url``, retrying fast."""
    return {
        "webhook_allowed_urls": url,
        "webhook_secret": SECRET,
        "webhook_max_attempts": "3",
        "webhook_retry_base_seconds": "0.05",
    }


def test_a_jobs_budget_and_summary_cap_reach_the_worker(
    producer: Producer, start_worker: StartWorker, fake_model: FakeModelServer
) -> None:
    start_worker()  # no provider: the extractive summarizer, cut to the job's budget
    small = producer.submit(
        session_id="s", tool_name="bash", output=OUTPUT, options={"budget_chars": 300}
    ).wait(30)
    large = producer.submit(
        session_id="s", tool_name="bash", output=OUTPUT, options={"budget_chars": 4000}
    ).wait(30)
    assert small.method is Method.EXTRACTIVE
    assert small.chars_out <= 300 < large.chars_out <= 4000


def test_a_jobs_model_and_cap_go_to_the_provider(
    settings: Settings, start_worker: StartWorker, fake_model: FakeModelServer
) -> None:
    start_worker(**provider_env(fake_model, "openai"), job_models="tiny-model")
    fake_model.set_default(ok("x" * 120))
    with Producer(settings.model_copy(update={"job_models": "tiny-model"})) as producer:
        capped = producer.submit(
            session_id="s",
            tool_name="bash",
            output=OUTPUT,
            options={"model": "tiny-model", "max_summary_chars": 100},
        ).wait(30)
    sent = [r.body["model"] for r in fake_model.requests if r.path.endswith("/chat/completions")]
    assert sent == ["tiny-model", "tiny-model"]  # the oversized answer was sent back once
    assert (capped.method, capped.fallback_reason) == (Method.FALLBACK, FallbackReason.OVERSIZED)


def test_summarize_false_passes_the_output_through_without_a_job(
    producer: Producer, redis_client: redis.Redis
) -> None:
    result = producer.submit(
        session_id="s", tool_name="bash", output=OUTPUT, options={"summarize": False}
    ).wait(1)
    assert (result.method, result.text) == (Method.PASSTHROUGH, OUTPUT)
    assert not redis_client.keys("tersify:job:*")


def test_cancelling_a_queued_job_drops_it_and_opens_the_gate(
    producer: Producer, start_worker: StartWorker, tmp_path: Path
) -> None:
    handle = producer.submit(session_id="q", tool_name="bash", output=OUTPUT)
    assert not producer.gate.is_open("q")
    done = producer.cancel(handle.job_id)
    assert done.state is JobState.QUEUED
    assert (done.result.method, done.result.fallback_reason) == (
        Method.FALLBACK,
        FallbackReason.CANCELLED,
    )
    assert 0 < done.result.chars_out < len(OUTPUT)
    assert producer.gate.is_open("q")
    assert handle.wait(1) == done.result
    worker = start_worker(log_format="json")
    wait_for(lambda: "job_skipped_duplicate" in worker.log_path.read_text(), "the job dropped")
    assert producer.get(handle.job_id) == done.result
    again = producer.cancel(handle.job_id)
    assert (again.state, again.result) == (JobState.FINISHED, done.result)


def test_a_finished_jobs_message_delivered_again_is_skipped(
    producer: Producer, start_worker: StartWorker, redis_client: Any
) -> None:
    handle = producer.submit(session_id="d", tool_name="bash", output=OUTPUT)
    (entry,) = redis_client.lrange("interactive", 0, -1)  # its message, as queued
    worker = start_worker(log_format="json")
    first = handle.wait(30)
    progress = keys.job_state(handle.job_id)
    assert redis_client.get(progress) == "T"  # the worker that stored it left its mark
    redis_client.lpush("interactive", entry)  # delivered again: an ack the worker lost
    wait_for(lambda: "job_skipped_duplicate" in worker.log_path.read_text(), "the job skipped")
    assert redis_client.get(progress) == "D"  # a third delivery is skipped at once
    assert redis_client.llen(keys.result(handle.job_id)) == 1
    assert not redis_client.exists(keys.late_result(handle.job_id))
    assert producer.get(handle.job_id) == first


def test_cancelling_a_running_job_ends_it_with_the_fallback_and_opens_the_gate(
    producer: Producer, start_worker: StartWorker, fake_model: FakeModelServer, redis_client: Any
) -> None:
    start_worker(**{**provider_env(fake_model, "openai"), "model_timeout_seconds": "20"})
    fake_model.set_default(ok(latency=15.0))
    handle = producer.submit(session_id="r", tool_name="bash", output=OUTPUT)
    wait_for(lambda: redis_client.exists(keys.job_state(handle.job_id)), "the worker took the job")
    done = producer.cancel(handle.job_id)
    assert done.state is JobState.RUNNING
    assert done.result.fallback_reason is FallbackReason.CANCELLED
    assert producer.gate.is_open("r")
    assert handle.wait(1).fallback_reason is FallbackReason.CANCELLED


def test_cancel_over_http_and_from_the_cli(
    settings: Settings, tmp_path: Path, producer: Producer
) -> None:
    api = ApiServer(settings, tmp_path, workers=1, api_tokens=TOKENS).start()
    try:
        with client(api) as http:
            queued = http.post("/v1/summaries", json=summary_body("h", OUTPUT))
            job_id = queued.json()["job_id"]
            cancelled = http.delete(f"/v1/summaries/{job_id}")
            assert cancelled.status_code == 200, cancelled.text
            assert cancelled.json()["state"] == "queued"
            assert cancelled.json()["result"]["fallback_reason"] == "cancelled"
            assert http.delete("/v1/summaries/unknownjob0").status_code == 404
    finally:
        api.stop()
    other = producer.submit(session_id="c", tool_name="bash", output=OUTPUT)
    printed = tersify(settings, "cancel", other.job_id, "--json")
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["state"] == "queued"
    missing = tersify(settings, "cancel", "no-such-job-0")
    assert missing.returncode == 1
    assert missing.stderr == (
        "tersify cancel: no job 'no-such-job-0' (never submitted, or its result expired)\n"
    )


def test_a_webhook_is_posted_once_signed_and_retried_past_failures(
    settings: Settings,
    start_worker: StartWorker,
    receiver: Callable[[list[int]], Receiver],
    redis_client: Any,
) -> None:
    hook = receiver([500, 503])  # two failures, then 200
    start_worker(**webhook_env(hook.url))
    with Producer(hooked(settings, hook.url)) as producer:
        result = producer.submit(
            session_id="w", tool_name="bash", output=OUTPUT, options={"callback_url": hook.url}
        ).wait(30)
        wait_for(lambda: len(hook.posts) >= 3, "three POSTs")
    wait_for(lambda: not redis_client.exists(keys.WEBHOOKS), "the schedule emptied")
    assert len(hook.posts) == 3
    bodies = {body for _, body in hook.posts}
    assert len(bodies) == 1  # the same result each time
    for headers, body in hook.posts:
        assert verify(SecretStr(SECRET), body, headers)
    assert len({headers[ID_HEADER] for headers, _ in hook.posts}) == 1  # one id for every retry
    assert SummaryResult.model_validate_json(bodies.pop()) == result


def test_a_webhook_is_given_up_after_its_last_attempt_and_the_secret_never_logged(
    settings: Settings, start_worker: StartWorker, receiver: Callable[[list[int]], Receiver]
) -> None:
    failing = receiver([500] * 10)
    worker = start_worker(**webhook_env(failing.url))
    with Producer(hooked(settings, failing.url)) as producer:
        producer.submit(
            session_id="g", tool_name="bash", output=OUTPUT, options={"callback_url": failing.url}
        ).wait(30)
    wait_for(lambda: "webhook_abandoned" in worker.log_path.read_text(), "given up")
    assert len(failing.posts) == 3
    assert SECRET not in worker.log_path.read_text()


def test_a_cancelled_job_posts_its_webhook_too(
    settings: Settings, start_worker: StartWorker, receiver: Callable[[list[int]], Receiver]
) -> None:
    hook = receiver([])
    with Producer(hooked(settings, hook.url)) as producer:
        handle = producer.submit(
            session_id="k", tool_name="bash", output=OUTPUT, options={"callback_url": hook.url}
        )
        producer.cancel(handle.job_id)
    start_worker(**webhook_env(hook.url))  # the first worker up delivers it
    wait_for(lambda: hook.posts, "the POST")
    posted = SummaryResult.model_validate_json(hook.posts[0][1])
    assert (posted.job_id, posted.fallback_reason) == (handle.job_id, FallbackReason.CANCELLED)
