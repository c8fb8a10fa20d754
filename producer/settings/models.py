"""Model providers: which ones summaries and compactions use, and the policy every call keeps.

Each provider's own settings (its key, base URL, model, …: ``TERSIFY_<NAME>_<FIELD>``) are
declared by the provider itself and read with ``Settings.section``; here are only the
settings every provider shares.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from tersify.settings.values import CommaList, PriceSetting, written

PROVIDER_NAME = r"^[a-z][a-z0-9_]{0,31}$"


class ModelSettings(BaseModel):
    """The providers chosen, the shared call policy (timeouts, retries, circuit, rate limit)
    and the one table of model prices."""

    main_provider: str | None = Field(
        None, pattern=PROVIDER_NAME, description="The agent's main provider."
    )
    summary_provider: str | None = Field(
        None, pattern=PROVIDER_NAME, description="Summaries; else main."
    )
    failover_provider: str | None = Field(
        None,
        pattern=PROVIDER_NAME,
        description="Tried when the summary provider is down; unset: no failover.",
    )
    compaction_provider: str | None = Field(
        None,
        pattern=PROVIDER_NAME,
        description="Compaction summaries; else the summary provider, else main.",
    )
    compaction_model: str | None = Field(None, description="Model for compaction; else default.")
    model_connect_timeout_seconds: float = Field(5.0, gt=0, description="TCP/TLS connect limit.")
    model_timeout_seconds: float = Field(30.0, gt=0, description="Longest single model call.")
    model_max_attempts: int = Field(
        3, ge=1, description="Tries per model call (429, 5xx, timeouts)."
    )
    model_retry_base_seconds: float = Field(0.5, ge=0, description="First retry's backoff ceiling.")
    model_retry_max_seconds: float = Field(8.0, ge=0, description="Largest backoff between tries.")
    circuit_failure_threshold: int = Field(
        5, ge=1, description="Consecutive outage failures that open a provider's circuit."
    )
    circuit_cooldown_seconds: float = Field(
        30.0, gt=0, description="How long a circuit stays open."
    )
    rate_limit_requests_per_minute: int = Field(0, ge=0, description="Per provider; 0: no limit.")
    rate_limit_tokens_per_minute: int = Field(0, ge=0, description="Per provider; 0: no limit.")
    job_models: CommaList = Field(
        written(""),
        description="Models a job may ask for, comma-separated, besides the configured ones.",
    )
    model_prices: PriceSetting = Field(
        written("claude-haiku-4-5-20251001=1.0/5.0,gpt-4.1-mini=0.4/1.6"),
        description="USD per million tokens in/out by model, `model=in/out,...` (list prices, "
        "November 2026; set your own): metrics and reprocessing estimates.",
    )
    allow_missing_key: bool = Field(
        False,
        description="Start a worker whose provider has no API key (every job falls back to "
        "truncation) instead of refusing to start.",
    )
    grounding_max_unsupported: int = Field(
        2, ge=0, description="Unsupported claims that reject a model answer; 0: log, never reject."
    )
