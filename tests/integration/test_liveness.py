"""Saying at once that no live worker serves a queue: the CLI's warning and the API's header."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tersify.client import Producer
from tersify.client.liveness import no_worker_warning
from tersify.contract import Queue
from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import tersify
from tests.integration.test_api import ApiServer, client, summary_body

LONG = "".join(f"line {i}: something happened at step {i}\n" for i in range(200))
StartWorker = Callable[..., WorkerProcess]


def test_submit_with_no_worker_warns_before_it_waits_out_its_timeout(settings: Settings) -> None:
    done = tersify(settings, "submit", "-", "--tool", "bash", "--timeout", "1", stdin=LONG)
    assert done.returncode == 3  # the wait still timed out: nothing took the job
    warning = done.stderr.index("no live worker serves")
    ended = done.stderr.index("is queued — no live worker serves interactive")
    assert warning < ended, done.stderr
    assert no_worker_warning(Queue.INTERACTIVE) in done.stderr


def test_submit_with_a_live_worker_says_nothing_about_liveness(
    settings: Settings, start_worker: StartWorker
) -> None:
    start_worker()
    done = tersify(settings, "submit", "-", "--tool", "bash", "--json", stdin=LONG)
    assert done.returncode == 0, done.stderr
    assert "no live worker" not in done.stderr
    assert json.loads(done.stdout)["chars_in"] == len(LONG)


def test_a_worker_counts_only_for_the_queues_it_consumes_and_leaves_them_when_it_stops(
    settings: Settings, start_worker: StartWorker, producer: Producer
) -> None:
    worker = start_worker(args=("--concurrency", "2", "--pool", "threads", "--queues", "batch"))
    assert (producer.live_workers(Queue.BATCH), producer.live_workers(Queue.INTERACTIVE)) == (1, 0)
    batch = tersify(settings, "submit", "-", "--tool", "bash", "--batch", stdin=LONG)
    assert batch.returncode == 0, batch.stderr
    assert "no live worker" not in batch.stderr
    interactive = tersify(settings, "submit", "-", "--tool", "bash", "--timeout", "1", stdin=LONG)
    assert no_worker_warning(Queue.INTERACTIVE) in interactive.stderr
    worker.stop()
    assert producer.live_workers(Queue.BATCH) == 0  # a clean stop leaves at once


def test_result_wait_and_compact_warn_too(settings: Settings, tmp_path: Path) -> None:
    queued = tersify(settings, "submit", "-", "--tool", "bash", "--no-wait", stdin=LONG)
    assert queued.returncode == 0, queued.stderr
    job_id = queued.stdout.strip()
    waited = tersify(settings, "result", job_id, "--wait", "1")
    assert waited.returncode == 3
    assert no_worker_warning(Queue.INTERACTIVE) in waited.stderr
    path = tmp_path / "messages.json"
    path.write_text(json.dumps([{"role": "user", "content": f"turn {i}"} for i in range(12)]))
    compacted = tersify(settings, "compact", str(path), "--timeout", "1")
    assert compacted.returncode == 3
    assert no_worker_warning(Queue.INTERACTIVE) in compacted.stderr


def test_the_api_accepts_a_job_no_worker_serves_with_a_warning_header(
    api_server: ApiServer, start_worker: StartWorker
) -> None:
    with client(api_server) as http:
        unserved = http.post("/v1/summaries", json=summary_body("warned", LONG))
        assert unserved.status_code == 202
        assert unserved.headers["Warning"] == (
            f'199 tersify "{no_worker_warning(Queue.INTERACTIVE)}"'
        )
        start_worker()
        served = http.post("/v1/summaries", json=summary_body("served", LONG))
        assert served.status_code == 202
        assert "Warning" not in served.headers
