"""The HTTP API: who may call it, how large and slow a request may be, tenants' quotas."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    model_validator,
)
from pydantic_settings import NoDecode

from tersify.settings.values import pairs, written

TenantName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]{1,64}$")]


class Quota(BaseModel):
    """A tenant's caps, written ``JOBS_PER_MINUTE/USD_PER_DAY`` (either may be left out; 0: no
    cap)."""

    model_config = ConfigDict(frozen=True)

    jobs_per_minute: int = Field(0, ge=0)
    usd_per_day: float = Field(0.0, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _written(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        jobs, _, usd = value.partition("/")
        return {"jobs_per_minute": jobs.strip() or 0, "usd_per_day": usd.strip() or 0}


Tenants = Annotated[dict[TenantName, Quota], NoDecode, BeforeValidator(pairs)]
"""Tenants by name, written ``NAME=JOBS/USD,...``."""


class ApiSettings(BaseModel):
    """``TERSIFY_API_*`` and ``TERSIFY_TENANTS``."""

    api_tokens: SecretStr | None = Field(
        None, description="Bearer tokens, comma-separated; TOKEN:SESSION scopes one (* a prefix)."
    )
    api_max_request_bytes: int | None = Field(
        None,
        ge=1024,
        description="Largest request body; else 3 × TERSIFY_MAX_OUTPUT_BYTES + 64 KiB.",
    )
    api_max_wait_seconds: float = Field(30.0, gt=0, le=300, description="Cap on ?wait= long-polls.")
    api_max_connections: int = Field(
        1000, ge=8, description="Open client connections per API process (at most half its fds)."
    )
    api_header_timeout_seconds: float = Field(
        10.0, gt=0, description="A request's headers must arrive within this (else closed)."
    )
    api_body_timeout_seconds: float = Field(
        60.0, gt=0, description="A request's body must arrive within this after its headers."
    )
    api_keep_alive_seconds: int = Field(5, ge=1, description="Idle keep-alive connections close.")
    tenants: Tenants = Field(
        written(""),
        description="Tenants and their quotas, `NAME=JOBS_PER_MINUTE/USD_PER_DAY,...` (0: no "
        "limit); a token joins one as `TOKEN[:SCOPE]#NAME` in TERSIFY_API_TOKENS.",
    )
    api_url: str = Field(
        "",
        description="An API `tersify output` reads through (with TERSIFY_API_TOKEN), scoped to the "
        "token's sessions; unset: it reads Redis directly.",
    )
    api_token: SecretStr | None = Field(
        None, description="The bearer token `tersify output` sends to TERSIFY_API_URL."
    )
    api_insecure_no_auth: bool = Field(
        False, description="Serve without tokens (loopback only): local development."
    )
