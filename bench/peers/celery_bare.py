"""The bare Celery baseline: one task that makes tersify's one HTTP call and nothing else.

Run by bench/throughput.py as ``python -m celery -A bench.peers.celery_bare worker ...`` with
``TERSIFY_REDIS_URL`` and ``TERSIFY_OPENAI_BASE_URL`` pointing at the benchmark's private Redis and
fake model. Celery's own defaults otherwise (early acks, prefetch 4): the baseline gets the
cheapest settings. Each pool slot (thread or greenlet) keeps its own one-connection httpx client.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
import redis
from celery import Celery, signals

from tersify.settings import Settings
from tersify.worker.model.providers import OpenAIProvider

TASK = "bench.bare_call"
DONE_KEY = "bench:done"
READY_KEY = "bench:ready:celery_bare"

settings = Settings()
app = Celery("bench-bare", broker=settings.redis_url, set_as_current=False)
app.conf.update(
    task_serializer="json",
    accept_content=["json"],
    task_ignore_result=True,
    worker_hijack_root_logger=False,
    worker_send_task_events=False,
    broker_connection_retry_on_startup=True,
)
_local = threading.local()  # greenlet-local under the gevent pool (threading is patched)
_redis = redis.Redis.from_url(settings.redis_url, max_connections=256)


def _client() -> httpx.Client:
    client: httpx.Client | None = getattr(_local, "client", None)
    if client is None:
        client = httpx.Client(
            base_url=OpenAIProvider.config(settings).base_url,
            timeout=30.0,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        )
        _local.client = client
    return client


@app.task(name=TASK, ignore_result=True)
def bare_call(text: str) -> None:
    """POST one chat completion to the model, count the job as done."""
    response = _client().post(
        "/chat/completions",
        json={"model": "fake-model", "messages": [{"role": "user", "content": text}]},
        headers={"Authorization": "Bearer k"},
    )
    response.raise_for_status()
    response.json()
    _redis.incr(DONE_KEY)


@signals.worker_ready.connect
def _ready(**_: Any) -> None:
    _redis.set(READY_KEY, 1)
