"""The webhook sender: one thread per worker process that POSTs due deliveries, signed.

It claims due deliveries from ``keys.WEBHOOKS`` atomically (each is POSTed by one worker),
POSTs each with a timeout and no redirects (a redirect could leave the allow-listed URLs), and
reschedules a failed one with doubling backoff until ``TERSIFY_WEBHOOK_MAX_ATTEMPTS``. It runs
beside the job slots, so a slow receiver never holds a job. Logs name the delivery and the
URL's host only: a URL's path or query may hold the receiver's own token.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import redis
import structlog
from pydantic import SecretStr, ValidationError

from tersify.settings import Settings
from tersify.store import keys, webhooks
from tersify.store.commands import execute

log = structlog.get_logger("tersify.webhooks")

_IDLE_SECONDS = 0.2
_BATCH = 16


class WebhookSender:
    """Delivers scheduled webhooks until stopped; ``start`` runs it on its own daemon thread."""

    def __init__(self, client: redis.Redis, settings: Settings, secret: SecretStr) -> None:
        self._redis = client
        self._settings = settings
        self._secret = secret
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        timeout = httpx.Timeout(settings.webhook_timeout_seconds)
        self._http = httpx.Client(timeout=timeout, follow_redirects=False)

    def start(self) -> WebhookSender:
        """Start the sender's thread."""
        self._thread = threading.Thread(target=self._run, name="tersify-webhooks", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread (bounded wait) and close its HTTP client."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self._settings.webhook_timeout_seconds + 1)
        self._http.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                due = self.claim()
            except redis.RedisError as exc:
                log.warning("webhook_claim_failed", error=type(exc).__name__)
                due = []
            for raw in due:
                self.deliver(raw)
            if not due:
                self._stop.wait(_IDLE_SECONDS)

    def claim(self) -> list[Any]:
        """Take the deliveries that are due off the schedule (atomically: no one else gets them)."""
        claimed: Any = self._redis.eval(webhooks.CLAIM_SCRIPT, 1, keys.WEBHOOKS, str(_BATCH))
        return list(claimed or [])

    def deliver(self, raw: Any) -> bool:
        """POST one delivery; on failure reschedule it with backoff, or give it up at the cap."""
        try:
            item = webhooks.Delivery.model_validate_json(raw)
        except ValidationError:
            log.error("webhook_unreadable")
            return False
        error = self._post(item)
        attempt = item.attempt + 1
        facts = {"delivery": item.id, "host": urlsplit(item.url).hostname, "attempt": attempt}
        if error is None:
            log.info("webhook_delivered", **facts)
            return True
        if attempt >= self._settings.webhook_max_attempts:
            log.error("webhook_abandoned", error=error, **facts)
            return False
        log.warning("webhook_failed", error=error, **facts)
        delay = self._settings.webhook_retry_base_seconds * 2 ** (attempt - 1)
        try:
            retry = item.model_copy(update={"attempt": attempt}).dump()
            execute(self._redis, webhooks.schedule(retry, delay))
        except redis.RedisError as exc:
            log.error("webhook_lost", error=type(exc).__name__, **facts)
        return False

    def _post(self, item: webhooks.Delivery) -> str | None:
        """POST the delivery signed now; None when the receiver answered 2xx, else why not."""
        body = item.body.encode()
        sent = int(time.time())
        headers = {
            "Content-Type": "application/json",
            webhooks.TIMESTAMP_HEADER: str(sent),
            webhooks.SIGNATURE_HEADER: webhooks.signature(self._secret, sent, body),
            webhooks.DELIVERY_HEADER: item.id,
        }
        try:
            status = self._http.post(item.url, content=body, headers=headers).status_code
        except httpx.HTTPError as exc:
            return type(exc).__name__
        return None if 200 <= status < 300 else f"status {status}"
