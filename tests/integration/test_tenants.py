"""Tenants over the HTTP API: per-tenant quotas answer 429 with Retry-After at submit, and the
worker's job and cost metrics carry the tenant (configured names only)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer
from tests.helpers import free_port, wait_for
from tests.integration.api import ApiServer
from tests.integration.conftest import provider_env
from tests.integration.test_api import LONG_OUTPUT
from tests.integration.test_metrics import scrape, total

ACME = "tok-acme-0123456789abcdef0123"
BETA = "tok-beta-0123456789abcdef0123"
FREE = "tok-untenanted-0123456789abcd"
TENANTS = "acme=2/0,beta=0/0.000001"
TOKENS = f"{ACME}#acme,{BETA}:beta-*#beta,{FREE}"


def submit(api: ApiServer, token: str, session: str, output: str = LONG_OUTPUT) -> httpx.Response:
    """POST one summary job with ``token``."""
    return httpx.post(
        f"{api.url}/v1/summaries",
        json={"session_id": session, "tool_name": "bash", "output": output},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def test_a_tenant_past_its_jobs_per_minute_gets_429_with_retry_after_and_others_do_not(
    start_api: Callable[..., ApiServer],
) -> None:
    api = start_api(api_tokens=TOKENS, tenants=TENANTS)
    assert [submit(api, ACME, f"acme-{n}").status_code for n in range(2)] == [202, 202]
    refused = submit(api, ACME, "acme-2", "short, would pass through")
    assert refused.status_code == 429
    assert refused.json()["code"] == "quota_exceeded"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert ACME not in refused.text
    assert submit(api, FREE, "free-0").status_code == 202  # no tenant: no quota
    assert submit(api, BETA, "beta-0").status_code == 202  # another tenant's count


def test_a_tenant_over_its_daily_spend_is_refused_until_midnight_and_its_cost_is_labelled(
    start_api: Callable[..., ApiServer],
    start_worker: Callable[..., WorkerProcess],
    fake_model: FakeModelServer,
    settings: Settings,
) -> None:
    port = free_port()
    start_worker(
        **provider_env(fake_model, "anthropic"),
        metrics_port=str(port),
        tenants=TENANTS,
        model_prices="claude-haiku-4-5-20251001=1/5",
    )
    api = start_api(api_tokens=TOKENS, tenants=TENANTS)
    first = submit(api, BETA, "beta-spend")
    assert first.status_code == 202
    waited = httpx.get(
        f"{api.url}{first.headers['Location']}?wait=30",
        headers={"Authorization": f"Bearer {BETA}"},
        timeout=40,
    )
    assert waited.json()["method"] == "llm" and waited.json()["tenant"] == "beta"

    def refused() -> httpx.Response | None:
        response = submit(api, BETA, "beta-spend-2")
        return response if response.status_code == 429 else None

    response = wait_for(refused, "the spend cap", timeout=60)  # the spend is written behind
    assert response.json()["code"] == "quota_exceeded"
    assert 60 <= int(response.headers["Retry-After"]) <= 86_401
    assert submit(api, ACME, "acme-after").status_code == 202
    samples = scrape(port)
    assert total(samples, "tersify_model_cost_usd_total", tenant="beta") > 0
    assert total(samples, "tersify_jobs_total", tenant="beta", method="llm") == 1
    assert total(samples, "tersify_model_cost_usd_total", tenant="acme") == 0
    tenants = {
        dict(ls).get("tenant") for (n, ls), _ in samples.items() if n == "tersify_jobs_total"
    }
    assert tenants <= {"", "acme", "beta"}


def test_a_token_naming_an_unknown_tenant_stops_the_api_from_starting(
    settings: Settings, tmp_path: Path
) -> None:
    server = ApiServer(settings, tmp_path, workers=1, api_tokens=f"{ACME}#nosuch", tenants=TENANTS)
    done = server.run_once()
    assert done.returncode != 0
    assert "entry 1 is malformed" in done.stderr and ACME not in done.stderr
