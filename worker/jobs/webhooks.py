"""The webhook sender: one thread per worker process that POSTs due deliveries, signed.

The thread runs an asyncio loop: each claimed delivery is its own task, at most
``TERSIFY_WEBHOOK_CONCURRENCY`` at once, under a total deadline (``TERSIFY_WEBHOOK_TIMEOUT_SECONDS``
for connecting, sending and the answer's status line together: a receiver that drips a byte a
second is cut at the deadline, not per read). The answer's body is never read (only its status
counts), so a huge answer costs nothing. Any failure of one delivery — a URL the client cannot
send, a slow receiver, a bug — ends that delivery only. Before each POST the worker checks the
URL against its own ``TERSIFY_WEBHOOK_ALLOWED_URLS`` (``tersify.store.callbacks``) and drops a
delivery of a session forgotten since its job was queued.

Claims are durable (``tersify.store.webhooks``): a delivery claimed by a worker that dies comes
back to the schedule when its lease lapses. Failed POSTs are rescheduled in Redis with doubling
backoff until ``TERSIFY_WEBHOOK_MAX_ATTEMPTS``; retries live in Redis rather than in a retrying
call (``tenacity``) because they must outlive the process and move to whichever worker is free.
Logs name the delivery and the URL's host only: a path or query may hold the receiver's token.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from urllib.parse import urlsplit

import httpx
import redis
import structlog
from pydantic import SecretStr, ValidationError

from tersify.contract import SummaryResult
from tersify.settings import Settings
from tersify.store import callbacks, keys, sessions, webhooks
from tersify.store.commands import execute
from tersify.worker.redact import leaving_with

log = structlog.get_logger("tersify.webhooks")

_IDLE_SECONDS = 0.2
_LEASE_MARGIN_SECONDS = 10.0


class WebhookSender:
    """Delivers scheduled webhooks until stopped; ``start`` runs it on its own daemon thread."""

    def __init__(self, client: redis.Redis, settings: Settings, secret: SecretStr) -> None:
        self._redis = client
        self._settings = settings
        self._secret = secret
        self._deadline = settings.webhook_timeout_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> WebhookSender:
        """Start the sender's thread."""
        self._thread = threading.Thread(target=self._run, name="tersify-webhooks", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread (bounded wait: deliveries in flight get their deadline)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self._deadline + 2)

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        slots = self._settings.webhook_concurrency
        limits = httpx.Limits(max_connections=slots, max_keepalive_connections=0)
        timeout = httpx.Timeout(self._deadline)
        running: set[asyncio.Task[None]] = set()
        async with httpx.AsyncClient(
            timeout=timeout, limits=limits, follow_redirects=False, trust_env=False
        ) as http:
            while not self._stop.is_set():
                due = await self._claimed(slots - len(running))
                for delivery_id, raw in due:
                    task = asyncio.create_task(self._deliver(http, delivery_id, raw))
                    running.add(task)
                    task.add_done_callback(running.discard)
                if not due:
                    await asyncio.sleep(_IDLE_SECONDS)
            if running:
                await asyncio.wait(running, timeout=self._deadline)

    async def _claimed(self, free: int) -> list[tuple[str, Any]]:
        """Claim up to ``free`` due deliveries; ``(id, stored JSON or None)`` for each."""
        if free <= 0:
            return []
        try:
            return await asyncio.to_thread(self.claim, free)
        except redis.RedisError as exc:
            log.warning("webhook_claim_failed", error=type(exc).__name__)
            return []

    def claim(self, most: int) -> list[tuple[str, Any]]:
        """Take up to ``most`` due deliveries off the schedule, leased to this sender."""
        lease_ms = int((self._deadline + _LEASE_MARGIN_SECONDS) * 1000)
        claim = webhooks.CLAIM_SCRIPT
        ids: Any = self._redis.eval(
            claim, 2, keys.WEBHOOKS, keys.WEBHOOKS_INFLIGHT, str(most), str(lease_ms)
        )
        found = [i.decode() if isinstance(i, bytes) else str(i) for i in ids or []]
        if not found:
            return []
        stored: Any = self._redis.mget([keys.webhook(i) for i in found])
        return list(zip(found, stored, strict=True))

    async def _deliver(self, http: httpx.AsyncClient, delivery_id: str, raw: Any) -> None:
        """One delivery, isolated: whatever goes wrong ends this one and no other."""
        try:
            await self.deliver(http, delivery_id, raw)
        except redis.RedisError as exc:  # its claim lapses and it comes back
            log.error("webhook_state_failed", delivery=delivery_id, error=type(exc).__name__)
        except Exception as exc:  # a bug here must not stop the other deliveries
            log.error("webhook_crashed", delivery=delivery_id, error=type(exc).__name__)
            await asyncio.to_thread(execute, self._redis, *webhooks.finish(delivery_id))

    async def deliver(self, http: httpx.AsyncClient, delivery_id: str, raw: Any) -> bool:
        """POST one delivery; on failure reschedule it with backoff, or give it up at the cap."""
        sendable = await asyncio.to_thread(self._sendable, delivery_id, raw)
        if sendable is None:
            await asyncio.to_thread(execute, self._redis, *webhooks.finish(delivery_id))
            return False
        item, url = sendable
        error = await self._post(http, item, url)
        attempt = item.attempt + 1
        facts = {"delivery": item.id, "host": urlsplit(url).hostname, "attempt": attempt}
        if error is None:
            log.info("webhook_delivered", **facts)
            await asyncio.to_thread(execute, self._redis, *webhooks.finish(item.id))
            return True
        if attempt >= self._settings.webhook_max_attempts:
            log.error("webhook_abandoned", error=error, **facts)
            await asyncio.to_thread(execute, self._redis, *webhooks.finish(item.id))
            return False
        log.warning("webhook_failed", error=error, **facts)
        delay = self._settings.webhook_retry_base_seconds * 2 ** (attempt - 1)
        retry = webhooks.reschedule(item.model_copy(update={"attempt": attempt}), delay)
        (kept,) = await asyncio.to_thread(execute, self._redis, retry)
        if not kept:  # deleted meanwhile: its session was forgotten
            log.info("webhook_dropped", delivery=item.id, why="gone")
        return False

    def _sendable(self, delivery_id: str, raw: Any) -> tuple[webhooks.Delivery, str] | None:
        """The delivery and the URL to POST it to, or None (logged) when it must not be sent."""
        if raw is None:
            log.info("webhook_dropped", delivery=delivery_id, why="gone")  # forgotten, expired
            return None
        try:
            item = webhooks.Delivery.model_validate_json(raw)
            item = item.model_copy(update={"body": self._leaving(item.body)})
        except ValidationError:
            log.error("webhook_unreadable", delivery=delivery_id)
            return None
        tombstone = self._redis.get(keys.forgotten(item.session_id))
        if sessions.dropped(tombstone, item.since_ms):
            log.info("webhook_dropped", delivery=delivery_id, why="forgotten")
            return None
        try:
            url = callbacks.checked(self._settings.webhook_allowed_urls, item.url)
        except callbacks.CallbackURLError as exc:
            log.error("webhook_refused", delivery=delivery_id, why=str(exc))
            return None
        return item, str(url)

    def _leaving(self, body: str) -> str:
        """The result as it may leave (``tersify.worker.redact.outgoing``): a producer that
        cancelled the job scheduled it unredacted."""
        result = SummaryResult.model_validate_json(body)
        return leaving_with(result, self._settings.redact).model_dump_json()

    async def _post(self, http: httpx.AsyncClient, item: webhooks.Delivery, url: str) -> str | None:
        """POST the delivery signed now; None when the receiver answered 2xx, else why not."""
        body = item.body.encode()
        headers = {"Content-Type": "application/json"}
        headers.update(webhooks.headers(self._secret, item.id, body))
        try:
            async with asyncio.timeout(self._deadline):
                async with http.stream("POST", url, content=body, headers=headers) as response:
                    status = response.status_code  # the body is never read
        except TimeoutError:
            return "deadline"
        except Exception as exc:  # any failure to send is this delivery's, retried
            return type(exc).__name__
        return None if 200 <= status < 300 else f"status {status}"
