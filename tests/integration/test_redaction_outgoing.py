"""Every result leaves redacted, whatever path made it: a summary cancelled past the gateway's
wait, a job cancelled over the API, its webhook, a passthrough. Real gateway, API, worker and
Redis processes; secrets made up in the providers' formats (``tests.fakesecrets``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import redis

from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, ok
from tests.helpers import wait_for
from tests.hooks import HookReceiver
from tests.integration.conftest import provider_env
from tests.integration.gateway import API_KEY, Gateway, model_requests
from tests.integration.test_api import TOKENS, ApiServer, client
from tests.integration.test_redaction import leaked, leaky_output

StartWorker = Callable[..., WorkerProcess]
StartGateway = Callable[..., Gateway]
StartApi = Callable[..., ApiServer]
REDACT = "model,log,result"
WORKER_CALLS = "tool_output_"  # in the worker's summary requests only (the prompt's fence)
WEBHOOK_SECRET = "whsec-outgoing-0123456789abcdef"


@pytest.fixture
def hooks() -> Iterator[HookReceiver]:
    """A loopback webhook receiver, closed when the test ends."""
    receiver = HookReceiver()
    yield receiver
    receiver.close()


def leaky_turn(output: str) -> dict[str, Any]:
    """A Messages request whose one tool result is ``output``."""
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "env"}}
    return {
        "model": "claude-opus-5-5",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "What is configured?"},
            {"role": "assistant", "content": [call]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": output}],
            },
        ],
    }


@pytest.mark.parametrize("seed", [3, 17])
def test_a_summary_cancelled_past_the_gateways_wait_leaves_without_its_secrets(
    seed: int,
    start_worker: StartWorker,
    start_gateway: StartGateway,
    fake_model: FakeModelServer,
    redis_client: redis.Redis,
) -> None:
    output, secrets = leaky_output(seed)
    assert len(output) > 4000 and secrets
    start_worker(
        **{**provider_env(fake_model, "anthropic"), "model_timeout_seconds": "30"}, redact=REDACT
    )
    gateway = start_gateway(gateway_wait_seconds="1", redact=REDACT)
    fake_model.add_rule(WORKER_CALLS, ok("too late", latency=8))
    headers = {"x-api-key": API_KEY, "anthropic-version": "2023-06-01"}
    response = httpx.post(
        gateway.url + "/v1/messages", json=leaky_turn(output), headers=headers, timeout=60
    )
    assert response.status_code == 200
    assert response.headers["tersify-rewrites"] == "new=1, reused=0, fallback=1"
    forwarded = model_requests(fake_model)
    assert len(forwarded) == 1
    assert "cut to its key lines" in forwarded[0].raw.decode()
    assert leaked([forwarded[0].raw.decode()], secrets) == []
    stored = [
        str(redis_client.hget(key, "text"))
        for key in redis_client.scan_iter(keys.gateway_rewrite("*"))
    ]
    assert len(stored) == 1
    assert leaked(stored, secrets) == []


def test_a_job_cancelled_over_the_api_and_its_webhook_and_a_passthrough_leave_without_secrets(
    settings: Settings,
    tmp_path: Any,
    start_worker: StartWorker,
    hooks: HookReceiver,
) -> None:
    output, secrets = leaky_output(5)
    short, short_secrets = leaky_output(6)
    short = short[:1400]
    short_secrets = [s for s in short_secrets if s in short]
    assert short_secrets
    hooked = {
        "redact": REDACT,
        "webhook_allowed_urls": hooks.base + "/",
        "webhook_secret": WEBHOOK_SECRET,
    }
    api = ApiServer(settings, tmp_path, workers=1, api_tokens=TOKENS, **hooked).start()
    try:
        with client(api) as http:
            body = {
                "session_id": "leaky",
                "tool_name": "bash",
                "command": "env",
                "output": output,
                "options": {"callback_url": hooks.url("/results/ok")},
            }
            accepted = http.post("/v1/summaries", json=body)
            assert accepted.status_code == 202, accepted.text
            job_id = accepted.json()["job_id"]
            cancelled = http.delete(f"/v1/summaries/{job_id}")
            assert cancelled.status_code == 200, cancelled.text
            assert cancelled.json()["result"]["fallback_reason"] == "cancelled"
            again = http.get(f"/v1/summaries/{job_id}")
            assert again.status_code == 200
            passed = http.post(
                "/v1/summaries",
                json={"session_id": "leaky", "tool_name": "bash", "output": short},
            )
            assert passed.status_code == 200 and passed.json()["method"] == "passthrough"
        start_worker(redact=REDACT, **{k: v for k, v in hooked.items() if k != "redact"})
        posted = wait_for(lambda: hooks.of("ok"), "the webhook posted", 30)
    finally:
        api.stop()
    assert json.loads(posted[0].body)["job_id"] == job_id
    texts = [cancelled.text, again.text, posted[0].body.decode()]
    assert "[secret:" in cancelled.json()["result"]["text"]
    assert leaked(texts, secrets) == []
    assert "[secret:" in passed.json()["text"]
    assert leaked([passed.text], short_secrets) == []
