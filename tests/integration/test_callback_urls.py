"""Generated callback URLs, scheduled past the producer's check, against the worker's sender.

Every URL goes straight into the schedule (as a producer with a wider list, or an older one,
would put it there); the real sender, on the test's Redis, checks each against its own list and
POSTs what passes to a loopback receiver. Nothing outside the allowed prefix may arrive, and a
canary scheduled after every generated URL must still arrive: no URL stops the sender.
"""

from __future__ import annotations

import time
from urllib.parse import unquote

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from tersify.contract import Method, SummaryResult, ToolType, utcnow
from tersify.settings import Settings
from tersify.store import keys, webhooks
from tersify.store.commands import execute
from tersify.worker.jobs.webhooks import WebhookSender
from tersify.worker.processes.redis_server import LocalRedis
from tests.callback_urls import callback_urls
from tests.helpers import wait_for
from tests.hooks import HookReceiver

SECRET = SecretStr("whsec-generated-0123456789abcdef")


def result(job_id: str) -> SummaryResult:
    """A small result to deliver."""
    now = utcnow()
    return SummaryResult(
        job_id=job_id, session_id="gen", text="ok", method=Method.PASSTHROUGH,
        tool_type=ToolType.COMMAND_OUTPUT, chars_in=2, chars_out=2,
        queued_at=now, started_at=now, finished_at=now,
    )  # fmt: skip


def settled(client: redis.Redis) -> bool:
    """Whether every scheduled delivery was sent, refused or given up."""
    return not client.exists(keys.WEBHOOKS, keys.WEBHOOKS_INFLIGHT)


def test_no_generated_url_escapes_the_allow_list_or_stops_the_sender(
    redis_server: LocalRedis, redis_client: redis.Redis
) -> None:
    hooks = HookReceiver()
    port = int(hooks.base.rsplit(":", 1)[1])
    config = Settings(
        redis_url=redis_server.url,
        webhook_allowed_urls=hooks.url("/hooks/"),
        webhook_secret=SECRET,
        webhook_max_attempts=1,
        webhook_timeout_seconds=2,
    )
    client = redis.Redis.from_url(redis_server.url)
    sender = WebhookSender(client, config, SECRET).start()

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(callback_urls(port), min_size=10, max_size=30))
    def deliver_all(urls: list[str]) -> None:
        canary = f"canary-{time.monotonic_ns()}"
        for n, url in enumerate(urls):
            item = webhooks.delivery(url, result(f"gen-{n}"))
            execute(client, *webhooks.schedule(item, 600))
        item = webhooks.delivery(hooks.url("/hooks/canary"), result(canary))
        execute(client, *webhooks.schedule(item, 600))
        wait_for(lambda: any(h.job_id == canary for h in hooks.hits), "the canary", 20)
        wait_for(lambda: settled(client), "every delivery settled", 20)

    try:
        deliver_all()
    finally:
        sender.stop()
        hooks.close()
        client.close()
    assert hooks.hits
    for hit in hooks.hits:
        segments = [unquote(unquote(s)) for s in hit.target.split("?")[0].split("/")[1:]]
        assert segments[0] == "hooks", hit.target
        assert not any(s.split(";")[0] in (".", "..") for s in segments), hit.target
