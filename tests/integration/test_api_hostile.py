"""The HTTP API against hostile and buggy clients: a real ``tersify api`` process, real Redis."""

from __future__ import annotations

import json
import re
import select
import socket
import string
import threading
import time
from collections.abc import Callable

import httpx
import pytest
import redis
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tersify.client import Producer
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.store.sessionlog import session_files
from tests.helpers import free_port, wait_for
from tests.integration.test_api import (
    SCOPED,
    TOKEN,
    ApiServer,
    assert_problem,
    client,
    summary_body,
)
from tests.rawhttp import (
    all_closed_by_server,
    closed_by_server,
    half_open,
    half_open_many,
    raise_fd_limit,
)

StartApi = Callable[..., ApiServer]
StartWorker = Callable[..., WorkerProcess]
PATHS = ("/x", "/healthz", "/v1/summaries/0123456789abcdef", "/v1/sessions/s/gate")

# RFC 9110 token characters: anything a client may put where the method goes
_TCHAR = string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~"
junk_methods = st.text(alphabet=_TCHAR, min_size=1, max_size=40).filter(
    lambda m: (
        m.upper() not in {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
        and m.upper() not in {"CONNECT", "TRACE"}
        and m != "other"  # the label every junk method is counted under
    )
)


def series(page: str) -> set[str]:
    """The names and label sets of a Prometheus text page's samples."""
    return {line.rpartition(" ")[0] for line in page.splitlines() if not line.startswith("#")}


def test_junk_methods_leave_the_metrics_page_the_same_size(start_api: StartApi) -> None:
    api = start_api()
    sent: list[str] = []
    with client(api, token=None) as http:
        http.get("/healthz")
        for path in PATHS:  # every series the junk can reach, made once
            http.request("WARMUP", path)
        http.get("/metrics")  # the scrape's own series, made once
        before = http.get("/metrics").text

        @hsettings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
        @given(st.lists(junk_methods, min_size=50, max_size=50))
        def send(methods: list[str]) -> None:
            for method in methods:
                response = http.request(method, PATHS[len(sent) % len(PATHS)])
                assert response.status_code in {400, 401, 404, 405}, response.text
                sent.append(method)

        send()
        scrape = http.get("/metrics")
        health = http.get("/healthz")
    assert len(sent) >= 2000
    assert scrape.status_code == 200 and health.status_code == 200
    assert series(scrape.text) == series(before)
    assert len(scrape.text) < len(before) * 1.1  # only the counts' digits grow
    assert 'method="other"' in scrape.text
    assert not any(f'method="{m}"' in scrape.text for m in set(sent))


@pytest.mark.slow
def test_healthz_answers_under_a_256_fd_limit_with_600_idle_and_half_sent_connections(
    start_api: StartApi,
) -> None:
    raise_fd_limit(2048)  # this test's own 600 sockets
    api = start_api(
        wrapper=("sh", "-c", 'ulimit -n 256 && exec "$@"', "sh"),
        api_header_timeout_seconds="2",
        api_body_timeout_seconds="3",
        api_keep_alive_seconds="1",
    )
    openers = (
        b"",  # silent
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n",  # headers never finished
        b"POST /v1/summaries HTTP/1.1\r\nHost: x\r\nContent-Length: 9999\r\n\r\n{",  # slow body
    )
    with half_open_many(api.port, 600, openers) as socks:
        probes = Probes(api)
        healthy = wait_for(probes.health, "/healthz answered", timeout=60)
        assert healthy == 200
        assert all_closed_by_server(socks, 10)
    assert api.alive()
    assert api.log().count("out of system resource") < 5
    closed = httpx.get(f"{api.url}/metrics", timeout=10).text
    counts = {
        labels: float(value)
        for labels, value in re.findall(r'connections_closed_total\{reason="(\w+)"\} (\S+)', closed)
    }
    assert counts["header_timeout"] > 0 and counts["body_timeout"] > 0
    # every one of them closed by the server, and each health probe it closed at its cap
    assert sum(counts.values()) == len(socks) + probes.closed_by_server


class Probes:
    """``/healthz`` probes, counting those the server closed unanswered (past its cap)."""

    def __init__(self, api: ApiServer) -> None:
        self.api = api
        self.closed_by_server = 0

    def health(self) -> int:
        """The status of one probe; 0 when it got none."""
        try:
            return httpx.get(f"{self.api.url}/healthz", timeout=3).status_code
        except (httpx.ConnectError, httpx.TimeoutException):
            return 0  # never accepted, or given up by the probe: the server closed nothing
        except httpx.TransportError:
            self.closed_by_server += 1  # accepted, then closed or reset without an answer
            return 0


def test_held_input_is_capped_per_session_by_bytes_and_count(
    start_api: StartApi, redis_client: redis.Redis
) -> None:
    api = start_api(gate_max_held_inputs="30")
    url = "/v1/sessions/team-a%2Fs1/held-input"
    big = {"message": "x" * 1_000_000}
    memory_before = int(redis_client.info("memory")["used_memory"])
    with client(api, token=SCOPED) as http:
        answers = [http.post(url, json=big) for _ in range(12)]
        ttl_after_accepted = redis_client.pttl(keys.gate_held("team-a/s1"))
        answers += [http.post(url, json=big) for _ in range(12)]
        ttl_after_refused = redis_client.pttl(keys.gate_held("team-a/s1"))
        taken = http.post(url + "/take").json()["messages"]
        small = [http.post(url, json={"message": f"m{i}"}) for i in range(32)]
    statuses = [a.status_code for a in answers]
    assert statuses == [200] * 4 + [429] * 20  # 4 MiB: four messages of a million bytes
    assert_problem(answers[-1], 429, "held_input_full")
    assert ttl_after_refused <= ttl_after_accepted  # refused pushes extend nothing
    assert len(taken) == 4
    assert int(redis_client.info("memory")["used_memory"]) - memory_before < 8 * 1024 * 1024
    assert [a.status_code for a in small] == [200] * 30 + [429] * 2


def test_an_unknown_or_foreign_compaction_is_a_404_before_any_wait(
    start_api: StartApi, producer: Producer
) -> None:
    api = start_api()
    theirs = producer.compact(
        session_id="not-team-a", messages=[{"role": "user", "content": "hi"}] * 4
    )
    # a client that gives up well before the 30 s wait: only an answer before any wait passes
    with client(api) as http, client(api, token=SCOPED) as scoped:
        http.timeout = scoped.timeout = httpx.Timeout(10.0)
        unknown = http.get("/v1/compactions/" + "0" * 32, params={"wait": 30})
        foreign = scoped.get(f"/v1/compactions/{theirs.job_id}", params={"wait": 30})
        running = http.get(f"/v1/compactions/{theirs.job_id}")
    assert_problem(unknown, 404, "not_found")
    assert_problem(foreign, 404, "not_found")
    assert running.status_code == 202  # no worker: still queued, and the owner sees it


def test_a_503_names_no_redis_host_or_port(start_api: StartApi) -> None:
    port = free_port()
    api = start_api(redis_url=f"redis://127.0.0.1:{port}/0")
    with client(api) as http:
        answers = [
            http.get("/healthz"),
            http.post("/v1/summaries", json=summary_body("down")),
            http.post("/v1/sessions/down/held-input", json={"message": "hi"}),
            http.get("/v1/sessions/down/gate"),
        ]
    for answer in answers:
        assert_problem(answer, 503, "redis_unavailable")
        assert str(port) not in answer.text and "127.0.0.1" not in answer.text
    assert str(port) in api.log()  # the operator still sees where it failed


def test_a_cjk_output_at_the_cap_fits_the_request_limit_however_it_is_escaped(
    start_api: StartApi,
) -> None:
    cap = 256 * 1024
    api = start_api(max_output_bytes=str(cap))
    output = "終" * (cap // 3)  # just under the cap in UTF-8; 6 bytes a character escaped
    body = json.dumps(summary_body("cjk", output), ensure_ascii=True)
    assert len(body) > 2 * cap
    with client(api) as http:
        escaped = http.post(
            "/v1/summaries", content=body, headers={"Content-Type": "application/json"}
        )
        over = http.post("/v1/summaries", json=summary_body("cjk", output + "終"))
    assert escaped.status_code == 202, escaped.text
    assert over.status_code == 202, over.text  # past the output cap: served, cut


def test_at_the_cap_a_new_connection_takes_the_place_of_the_oldest_half_open_one(
    start_api: StartApi,
) -> None:
    api = start_api(api_max_connections="8", api_header_timeout_seconds="60")
    silent = [s for _ in range(12) if (s := half_open(api.port, b"")) is not None]
    try:
        # a closed (reset) socket turns readable; a held one stays silent for its 60 s
        def closed() -> list[socket.socket]:
            return select.select(silent, [], [], 0)[0]

        wait_for(lambda: len(closed()) >= len(silent) - 8, "the oldest connections closed")
        assert all(closed_by_server(sock) for sock in closed())
        # the newest connections hold the slots: a client arriving now takes the oldest's
        assert set(closed()) <= set(silent[: len(closed())])
        assert wait_for(lambda: Probes(api).health() == 200, "a slot for /healthz", timeout=30)
    finally:
        for sock in silent:
            sock.close()
    page = httpx.get(f"{api.url}/metrics", timeout=10).text
    assert 'tersify_api_connections_closed_total{reason="evicted"}' in page


def test_past_the_cap_with_every_connection_busy_a_new_one_is_closed_at_once(
    start_api: StartApi, producer: Producer
) -> None:
    api = start_api(api_max_connections="8")
    producer.submit(session_id="busy", tool_name="bash", output="x\n" * 2000)  # no worker: gated
    with httpx.Client(base_url=api.url, timeout=60) as warm:
        assert warm.get("/healthz").status_code == 200
    held: list[socket.socket] = []
    try:
        for _ in range(8):  # eight long-polls: every slot has a request in hand
            request = b"GET /v1/sessions/busy/gate?wait=30 HTTP/1.1\r\nHost: x\r\n"
            sock = half_open(api.port, request + f"Authorization: Bearer {TOKEN}\r\n\r\n".encode())
            assert sock is not None
            held.append(sock)
        time.sleep(1)  # the long-polls are read and waiting
        extra = half_open(api.port, b"")
        assert extra is not None
        held.append(extra)
        extra.settimeout(10)
        assert closed_by_server(extra)
        assert not select.select(held[:-1], [], [], 0)[0]  # none of the busy ones was closed
    finally:
        for sock in held:
            sock.close()
    page = httpx.get(f"{api.url}/metrics", timeout=10).text
    assert 'tersify_api_connections_closed_total{reason="cap"}' in page


def test_a_token_scoped_to_a_127_character_session_never_deletes_a_longer_sessions_log(
    start_api: StartApi, start_worker: StartWorker, producer: Producer, settings: Settings
) -> None:
    short = "s" * 127
    longer = short + "-longer" * 10  # its file name once began with the short one's
    token = "tok-short-0123456789abcdef"
    api = start_api(api_tokens=f"{token}:{short}", session_log_dir=str(settings.session_log_dir))
    start_worker()
    for session in (short, longer):
        producer.submit(session_id=session, tool_name="bash", output="a short output").result()
    directory = settings.session_log_dir
    wait_for(lambda: session_files(directory, short), "the short session logged")
    kept = wait_for(lambda: session_files(directory, longer), "the longer session logged")
    with client(api, token) as http:
        assert http.delete(f"/v1/sessions/{longer}").status_code == 403
        forgot = http.delete(f"/v1/sessions/{short}")
    assert forgot.status_code == 200 and forgot.json()["log_files"] == 1
    assert session_files(directory, short) == []
    assert session_files(directory, longer) == kept and all(p.exists() for p in kept)


def test_large_submits_never_hold_another_clients_gate_read(start_api: StartApi) -> None:
    api = start_api()
    line = "2026-01-01T00:00:00 INFO worker-{:07d} handled a request in 12 ms\n"
    big = "".join(line.format(i) for i in range(20 * 1024 * 1024 // len(line.format(0))))
    took: dict[str, list[float]] = {"submit": [], "gate": []}

    def send(kind: str, method: str, path: str, body: bytes | None = None) -> None:
        with client(api) as http:
            started = time.monotonic()
            headers = {"Content-Type": "application/json"}
            response = http.request(method, path, content=body, headers=headers, timeout=300)
        assert response.status_code in (200, 202), response.text
        took[kind].append(time.monotonic() - started)

    submits = [
        threading.Thread(
            target=send,
            args=("submit", "POST", "/v1/summaries", _submit_body(f"loud-{n}", big + str(n))),
        )
        for n in range(3)
    ]
    for thread in submits:
        thread.start()
    time.sleep(0.5)  # the bodies are on their way
    while any(thread.is_alive() for thread in submits) and len(took["gate"]) < 500:
        send("gate", "GET", "/v1/sessions/quiet/gate")
    for thread in submits:
        thread.join(300)
    assert len(took["submit"]) == 3 and took["gate"], took
    # every gate read answered while the large submits were cut, hashed and compressed, in a
    # fraction of the time any of them took: never queued behind that work on the event loop
    assert max(took["gate"]) * 5 < min(took["submit"]), took


def _submit_body(session: str, output: str) -> bytes:
    return json.dumps({"session_id": session, "tool_name": "bash", "output": output}).encode()
