"""Webhooks: which callback URLs a job may name, how deliveries are signed and retried."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr

from tersify.settings.values import CommaList, written


class WebhookSettings(BaseModel):
    """``TERSIFY_WEBHOOK_*``."""

    webhook_allowed_urls: CommaList = Field(
        written(""),
        description="URL prefixes a job's callback_url may start with; empty: webhooks off.",
    )
    webhook_secret: SecretStr | None = Field(
        None, description="Signs every webhook POST (Standard Webhooks); required for webhooks."
    )
    webhook_max_attempts: int = Field(5, ge=1, description="POSTs of one webhook before giving up.")
    webhook_retry_base_seconds: float = Field(
        1.0, gt=0, description="Backoff before the first webhook retry; doubles each time."
    )
    webhook_timeout_seconds: float = Field(
        5.0,
        gt=0,
        description="Longest webhook POST, in total (connect, send, the answer's status).",
    )
    webhook_concurrency: int = Field(
        16, ge=1, description="Webhook POSTs one worker process has in flight at once."
    )
