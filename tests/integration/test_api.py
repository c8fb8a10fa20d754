"""The HTTP API over real HTTP: a ``tersify api`` server process, real Redis, real workers."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tersify.contract import Method, SummaryResult
from tersify.settings import Settings
from tersify.store.redis_url import redis_client
from tersify.text.spill import SpillStore
from tersify.worker.api.openapi import DOCUMENT, render
from tersify.worker.processes.redis_server import LocalRedis
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import free_port, wait_for
from tests.integration.api import SCOPED, TOKEN, TOKENS, ApiServer

LONG_OUTPUT = "".join(f"line {i}: ERROR something failed at step {i}\n" for i in range(400))
StartWorker = Callable[..., WorkerProcess]


@pytest.fixture(scope="module")
def shared_api(
    redis_server: LocalRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiServer]:
    """One API server (two processes behind one port) for the module: it keeps no state."""
    settings = Settings(redis_url=redis_server.url)
    server = ApiServer(settings, tmp_path_factory.mktemp("api"), workers=2, api_tokens=TOKENS)
    yield server.start()
    server.stop()


@pytest.fixture
def api(shared_api: ApiServer, settings: Settings) -> ApiServer:
    """The shared API server, over this test's freshly emptied Redis."""
    return shared_api


def client(server: ApiServer, token: str | None = TOKEN) -> httpx.Client:
    """An HTTP client for ``server``, authenticated with ``token``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=40.0)


def summary_body(session_id: str, output: str = LONG_OUTPUT) -> dict[str, Any]:
    """A submit request for a bash output."""
    return {"session_id": session_id, "tool_name": "bash", "command": "make", "output": output}


def assert_problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The response is an RFC 9457 problem with ``status`` and ``code``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert set(body) == {"type", "title", "status", "code", "detail"}
    assert (body["status"], body["code"]) == (status, code)
    assert body["type"] == f"urn:tersify:problem:{code}"
    return body


def test_a_short_output_comes_back_inline_as_a_passthrough_result(
    api: ApiServer, redis_client: redis.Redis
) -> None:
    with client(api) as http:
        response = http.post("/v1/summaries", json=summary_body("s1", "all 3 tests passed\n"))
    assert response.status_code == 200
    result = SummaryResult.model_validate(response.json())
    assert (result.method, result.text) == (Method.PASSTHROUGH, "all 3 tests passed\n")
    assert not redis_client.keys("tersify:job:*")  # no job was made


def test_a_job_lives_its_whole_life_over_http(api: ApiServer, start_worker: StartWorker) -> None:
    with client(api) as http:
        submitted = http.post("/v1/summaries", json=summary_body("life"))
        assert submitted.status_code == 202
        job_id = submitted.json()["job_id"]
        assert submitted.headers["location"] == f"/v1/summaries/{job_id}"
        gate = http.get("/v1/sessions/life/gate").json()
        assert gate["open"] is False
        assert [job["job_id"] for job in gate["jobs"]] == [job_id]
        assert http.get(f"/v1/summaries/{job_id}").status_code == 202  # no worker yet

        start_worker()
        done = http.get(f"/v1/summaries/{job_id}", params={"wait": 30})
        assert done.status_code == 200, done.text
        result = SummaryResult.model_validate(done.json())
        assert (result.job_id, result.session_id) == (job_id, "life")
        assert result.method is Method.EXTRACTIVE
        assert result.chars_in == len(LONG_OUTPUT) > result.chars_out
        assert http.get("/v1/sessions/life/gate", params={"wait": 30}).json()["open"] is True
        again = http.get(f"/v1/summaries/{job_id}")
        assert SummaryResult.model_validate(again.json()) == result


def test_a_long_poll_returns_the_result_as_soon_as_a_worker_stores_it(
    api: ApiServer, start_worker: StartWorker
) -> None:
    with client(api) as http:
        job_id = http.post("/v1/summaries", json=summary_body("poll")).json()["job_id"]
        answers: list[httpx.Response] = []
        poll = threading.Thread(
            target=lambda: answers.append(http.get(f"/v1/summaries/{job_id}?wait=30"))
        )
        poll.start()
        start_worker()  # the job can only finish now, while the poll is already waiting
        poll.join(timeout=40)
    assert not poll.is_alive()
    assert answers[0].status_code == 200, answers[0].text
    assert answers[0].json()["job_id"] == job_id


def test_a_batch_job_with_a_line_range_is_queued_without_closing_the_gate(api: ApiServer) -> None:
    body = {**summary_body("batch"), "queue": "batch", "relevant_lines": {"start": 10, "end": 20}}
    with client(api) as http:
        submitted = http.post("/v1/summaries", json=body)
        gate = http.get("/v1/sessions/batch/gate").json()
        reversed_range = {**body, "relevant_lines": {"start": 20, "end": 10}}
        refused = http.post("/v1/summaries", json=reversed_range)
    assert submitted.status_code == 202
    assert (gate["open"], gate["jobs"]) == (True, [])
    assert_problem(refused, 422, "invalid_request")


def test_a_job_still_running_after_the_wait_answers_202_with_its_location(api: ApiServer) -> None:
    with client(api) as http:
        job_id = http.post("/v1/summaries", json=summary_body("pending")).json()["job_id"]
        response = http.get(f"/v1/summaries/{job_id}", params={"wait": 0.2})
    assert response.status_code == 202
    assert response.json() == {"job_id": job_id, "status": "pending"}
    assert response.headers["location"] == f"/v1/summaries/{job_id}"


def test_an_unknown_job_is_a_404_problem(api: ApiServer) -> None:
    with client(api) as http:
        response = http.get("/v1/summaries/0123456789abcdef0123456789abcdef")
    assert_problem(response, 404, "not_found")


def test_requests_without_a_valid_token_are_refused_without_echoing_it(api: ApiServer) -> None:
    with client(api, token=None) as http:
        missing = http.post("/v1/summaries", json=summary_body("s1", "x"))
    with client(api, token="not-a-token-SECRET-VALUE") as http:
        wrong = http.get("/v1/sessions/s1/gate")
    assert_problem(missing, 401, "unauthorized")
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert "SECRET" not in assert_problem(wrong, 401, "unauthorized")["detail"]
    assert TOKEN not in api.log_path.read_text()


def test_a_scoped_token_reaches_only_its_own_sessions(api: ApiServer) -> None:
    with client(api) as full, client(api, token=SCOPED) as scoped:
        other_job = full.post("/v1/summaries", json=summary_body("team-b/x")).json()["job_id"]
        own = scoped.post("/v1/summaries", json=summary_body("team-a/x"))
        assert own.status_code == 202
        assert scoped.get(f"/v1/summaries/{own.json()['job_id']}").status_code == 202
        assert_problem(scoped.get(f"/v1/summaries/{other_job}"), 404, "not_found")
        refused = scoped.post("/v1/summaries", json=summary_body("team-b/x"))
        assert_problem(refused, 403, "forbidden_session")
        assert_problem(scoped.get("/v1/sessions/team-b%2Fx/gate"), 403, "forbidden_session")
        assert scoped.get("/v1/sessions/team-a%2Fx/gate").json()["open"] is False


def test_a_body_over_the_declared_limit_is_a_413_problem(
    start_api: Callable[..., ApiServer],
) -> None:
    api = start_api(api_max_request_bytes="4096", max_output_bytes="2048")
    with client(api) as http:
        declared = http.post("/v1/summaries", json=summary_body("big", "x" * 5000))
        assert_problem(declared, 413, "payload_too_large")

        def chunks() -> Iterator[bytes]:  # no Content-Length: the server counts the stream
            body = json.dumps(summary_body("big", "x" * 5000)).encode()
            for start in range(0, len(body), 1000):
                yield body[start : start + 1000]

        streamed = http.post(
            "/v1/summaries", content=chunks(), headers={"content-type": "application/json"}
        )
        assert_problem(streamed, 413, "payload_too_large")
        # under the body limit, over the output cap: served, cut to its head, tail and lines
        # that matter, and the cut stated
        too_long = http.post("/v1/summaries", json=summary_body("big", "x\n" * 1100))
        assert too_long.status_code == 202, too_long.text
    assert declared.json()["detail"] == (
        f"the request body is {int(declared.request.headers['content-length']):,} bytes over "
        "the limit of 4,096 bytes (TERSIFY_API_MAX_REQUEST_BYTES, else 3 × "
        "TERSIFY_MAX_OUTPUT_BYTES + 64 KiB)"
    )


def test_malformed_requests_are_422_problems(api: ApiServer) -> None:
    with client(api) as http:
        not_json = http.post(
            "/v1/summaries", content=b"{not json", headers={"content-type": "application/json"}
        )
        missing = http.post("/v1/summaries", json={"session_id": "s1", "tool_name": "bash"})
        bad_wait = http.get("/v1/summaries/0123456789abcdef", params={"wait": -1})
        as_form = http.post("/v1/summaries", data={"session_id": "s1"})
    assert_problem(not_json, 422, "invalid_request")
    assert "output" in assert_problem(missing, 422, "invalid_request")["detail"]
    assert_problem(bad_wait, 422, "invalid_request")
    assert (
        "Content-Type: application/json"
        in assert_problem(as_form, 422, "invalid_request")["detail"]
    )


def test_input_held_while_the_gate_is_closed_is_handed_back_once_it_opens(
    api: ApiServer, start_worker: StartWorker
) -> None:
    with client(api) as http:
        http.post("/v1/summaries", json=summary_body("held"))
        for n, message in enumerate(["first", "second"], start=1):
            held = http.post("/v1/sessions/held/held-input", json={"message": message})
            assert held.json() == {"held_inputs": n}
        assert http.post("/v1/sessions/held/held-input/take").json() == {"messages": []}
        start_worker()
        gate = http.get("/v1/sessions/held/gate", params={"wait": 30}).json()
        assert (gate["open"], gate["held_inputs"]) == (True, 2)
        taken = http.post("/v1/sessions/held/held-input/take").json()
        assert taken == {"messages": ["first", "second"]}
        assert http.post("/v1/sessions/held/held-input/take").json() == {"messages": []}


def test_a_compaction_job_is_submitted_and_read_back(
    api: ApiServer, start_worker: StartWorker
) -> None:
    turns = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}: " + "words " * 120}
        for i in range(14)
    ]
    start_worker()
    with client(api) as http:
        submitted = http.post("/v1/compactions", json={"session_id": "c1", "messages": turns})
        assert submitted.status_code == 202, submitted.text
        location = submitted.headers["location"]
        done = http.get(location, params={"wait": 30})
    assert done.status_code == 200, done.text
    body = done.json()
    assert (body["job_id"], body["session_id"]) == (submitted.json()["job_id"], "c1")
    assert body["messages_before"] == 14 > body["messages_after"]
    with client(api) as http:
        assert http.get("/v1/compactions/" + "0" * 32).status_code == 404


def test_a_spilled_text_is_read_back_by_line_range(api: ApiServer, settings: Settings) -> None:
    with redis_client(settings) as raw:
        store = SpillStore(raw, ttl_seconds=60)
        ref = store.save("team-b/s", "".join(f"row {i}\n" for i in range(10)))
    with client(api) as http, client(api, token=SCOPED) as scoped:
        window = http.get(f"/v1/spill/{ref}", params={"offset": 2, "limit": 3}).json()
        assert window == {
            "ref": ref,
            "offset": 2,
            "lines": ["row 2", "row 3", "row 4"],
            "total_lines": 10,
            "has_more": True,
        }
        assert_problem(scoped.get(f"/v1/spill/{ref}"), 404, "not_found")
        assert_problem(http.get("/v1/spill/0123456789abcdef"), 404, "not_found")


def test_health_and_metrics_answer_without_a_token(api: ApiServer) -> None:
    with client(api, token=None) as http:
        assert http.get("/healthz").json() == {"status": "ok"}
        metrics = http.get("/metrics")
    assert metrics.status_code == 200
    assert 'tersify_api_requests_total{method="GET",route="/healthz",status="2xx"}' in metrics.text


def test_an_unreachable_redis_is_a_503_problem(start_api: Callable[..., ApiServer]) -> None:
    api = start_api(redis_url=f"redis://127.0.0.1:{free_port()}/0")
    with client(api) as http:
        assert_problem(http.get("/healthz"), 503, "redis_unavailable")
        assert_problem(
            http.post("/v1/summaries", json=summary_body("down")), 503, "redis_unavailable"
        )


def test_the_server_refuses_to_start_open_unless_told_to_and_then_only_on_loopback(
    settings: Settings, tmp_path: Path
) -> None:
    no_tokens = ApiServer(settings, tmp_path, api_tokens="")
    refused = no_tokens.run_once()
    assert refused.returncode == 2
    assert "TERSIFY_API_TOKENS" in refused.stderr
    insecure = ApiServer(settings, tmp_path, api_tokens="", api_insecure_no_auth="true")
    exposed = insecure.run_once("--host", "0.0.0.0")
    assert exposed.returncode == 2
    assert "loopback" in exposed.stderr
    malformed = ApiServer(settings, tmp_path, api_tokens="good-token,secret-half:")
    bad_entry = malformed.run_once()
    assert bad_entry.returncode == 2
    assert "entry 2 is malformed" in bad_entry.stderr
    assert "secret-half" not in bad_entry.stderr


def test_docs_openapi_json_is_the_document_the_server_serves(api: ApiServer) -> None:
    assert DOCUMENT.read_text(encoding="utf-8") == render(), (
        "docs/openapi.json is stale: run python -m tersify.worker.api.openapi"
    )
    served = httpx.get(f"{api.url}/openapi.json").json()
    assert served == json.loads(render())


def test_more_long_polls_than_redis_connections_neither_fail_nor_block_submits(
    start_api: Callable[..., ApiServer], start_worker: StartWorker, redis_client: redis.Redis
) -> None:
    server = start_api(redis_pool_size="6")
    polls = 10  # of each kind, more than the process's Redis connections
    with client(server) as http:
        job_ids = [
            http.post("/v1/summaries", json=summary_body(f"many-{i}")).json()["job_id"]
            for i in range(polls)
        ]
        answers: dict[str, httpx.Response] = {}

        def poll(path: str) -> None:
            with client(server) as own:
                answers[path] = own.get(path, params={"wait": 30})

        paths = [f"/v1/summaries/{job_id}" for job_id in job_ids]
        paths += [f"/v1/sessions/many-{i}/gate" for i in range(polls)]
        threads = [threading.Thread(target=poll, args=(path,)) for path in paths]
        for thread in threads:
            thread.start()

        def waiting() -> tuple[int, int]:
            """Connections in BLMOVE right now, and subscribed ones (no worker runs yet)."""
            connections = redis_client.client_list()
            blocked = sum("b" in c["flags"] for c in connections)
            subscribed = sum(int(c["sub"]) > 0 for c in connections)
            # Half of each client's 6 connections at most block or subscribe; the rest poll.
            assert blocked <= 3 and subscribed <= 3, (blocked, subscribed)
            return blocked, subscribed

        wait_for(lambda: min(waiting()) >= 1, timeout=20)  # however slow the machine is
        # Waiting requests must not take the connections submits and reads need.
        late = http.post("/v1/summaries", json=summary_body("late"))
        assert late.status_code == 202, late.text
        assert http.get(paths[0]).status_code == 202
        assert http.get("/v1/sessions/many-0/gate").json()["open"] is False
        start_worker()
        for thread in threads:
            thread.join(timeout=45)
    assert not any(thread.is_alive() for thread in threads)
    assert {path: answers[path].status_code for path in paths} == dict.fromkeys(paths, 200)
    assert all(answers[path].json()["open"] is True for path in paths if path.endswith("/gate"))
