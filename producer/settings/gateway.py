"""The model-API gateway: where it forwards, which results it replaces, how long it waits."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator

from tersify.settings.values import LowerList, written


class GatewaySettings(BaseModel):
    """``TERSIFY_GATEWAY_*``; an upstream must be an http(s) URL with a host."""

    gateway_anthropic_upstream: str = Field(
        "https://api.anthropic.com",
        description="Where the gateway sends Anthropic requests (the client's /v1/… path follows).",
    )
    gateway_openai_upstream: str = Field(
        "https://api.openai.com",
        description="Where the gateway sends OpenAI requests (the client's /v1/… path follows).",
    )
    gateway_threshold_chars: int = Field(
        4000, ge=0, description="Tool results longer than this are replaced by their summaries."
    )
    gateway_wait_seconds: float = Field(
        20.0, gt=0, description="Longest wait for new summaries; then their jobs end as fallbacks."
    )
    gateway_rewrite_ttl_seconds: int = Field(
        7 * 86_400,
        ge=60,
        description="How long a replacement is kept for the next turns (renewed on each use).",
    )
    gateway_session_headers: LowerList = Field(
        written("x-tersify-session,x-claude-code-session-id"),
        description="Request headers that name the session, first found wins; else it is derived "
        "from the conversation.",
    )
    gateway_skip_tools: LowerList = Field(
        written(""), description="Tool names whose results always pass whole, comma-separated."
    )
    gateway_upstream_timeout_seconds: float = Field(
        600.0, gt=0, description="Longest silence from the upstream before the gateway gives up."
    )
    gateway_max_body_bytes: int = Field(
        32 * 1024 * 1024,
        ge=1024,
        description="Largest request body the gateway takes (413 past it).",
    )
    gateway_max_connections: int = Field(
        1000, ge=8, description="Open client connections of the gateway (at most half its fds)."
    )
    gateway_header_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="A request's headers must reach the gateway within this (else closed).",
    )
    gateway_body_timeout_seconds: float = Field(
        120.0,
        gt=0,
        description="A request's body must reach the gateway within this after its headers.",
    )

    @field_validator("gateway_anthropic_upstream", "gateway_openai_upstream")
    @classmethod
    def _http_url(cls, url: str) -> str:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            fixed = f"https://{url.strip()}" if "://" not in url else "https://HOST"
            raise ValueError(f"not an http(s) URL: write it with its scheme, as {fixed}")
        return url.strip()
