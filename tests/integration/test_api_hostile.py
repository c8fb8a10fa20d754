"""The HTTP API against hostile and buggy clients: a real ``tersify api`` process, real Redis."""

from __future__ import annotations

import string
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from producer.settings import Settings
from tests.integration.test_api import TOKENS, ApiServer, client

StartApi = Callable[..., ApiServer]
PATHS = ("/x", "/healthz", "/v1/summaries/0123456789abcdef", "/v1/sessions/s/gate")

# RFC 9110 token characters: anything a client may put where the method goes
_TCHAR = string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~"
junk_methods = st.text(alphabet=_TCHAR, min_size=1, max_size=40).filter(
    lambda m: (
        m.upper() not in {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
        and m.upper() not in {"CONNECT", "TRACE"}
    )
)


def series(page: str) -> set[str]:
    """The names and label sets of a Prometheus text page's samples."""
    return {line.rpartition(" ")[0] for line in page.splitlines() if not line.startswith("#")}


@pytest.fixture
def start_api(settings: Settings, tmp_path: Path) -> Iterator[StartApi]:
    """Start one-process API servers on the test's Redis; stopped when the test ends."""
    started: list[ApiServer] = []

    def start(*, wrapper: tuple[str, ...] = (), **env: str) -> ApiServer:
        env.setdefault("api_tokens", TOKENS)
        server = ApiServer(settings, tmp_path, workers=1, **env)
        server.argv = [*wrapper, *server.argv]
        started.append(server.start())
        return server

    yield start
    for server in started:
        server.stop()


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
