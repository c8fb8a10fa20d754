"""The one settings class: every tunable default, read from ``TERSIFY_*`` environment variables.

Fields are flat (``TERSIFY_ANTHROPIC_API_KEY``, not ``TERSIFY_ANTHROPIC__API_KEY``) because the
variable names are public surface that deploy files and users already rely on. Build one
``Settings()`` at each entry point and pass it down; nothing else reads the environment.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class ProviderName(StrEnum):
    """Model providers a worker can call."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    EXTRACTIVE = "extractive"


class Settings(BaseSettings):
    """Every tersify default; see the configuration table in the README."""

    model_config = SettingsConfigDict(
        env_prefix="TERSIFY_", extra="ignore", frozen=True, validate_default=True
    )

    # Redis
    redis_url: str = Field(
        "redis://127.0.0.1:6379/0",
        description="Broker, results, gate; `sentinel://H:P[,H:P…]/PRIMARY[/DB]` for Sentinel.",
    )
    redis_pool_size: int = Field(128, ge=4, description="Most Redis connections per process.")
    redis_password: SecretStr | None = Field(
        None, description="The primary's password with a `sentinel://` URL."
    )
    redis_sentinel_password: SecretStr | None = Field(
        None, description="The sentinels' own password (`requirepass` in sentinel.conf)."
    )
    redis_failover_seconds: float = Field(
        30.0,
        gt=0,
        description="With Sentinel: how long commands retry while a new primary is chosen.",
    )

    # Thresholds and budgets (characters)
    summarize_threshold_chars: int = Field(
        1500, ge=0, description="Outputs at or under pass through."
    )
    max_summary_chars: int = Field(800, ge=50, description="Longest model summary accepted.")
    local_budget_chars: int = Field(2000, ge=200, description="Budget of extractive and fallback.")
    max_model_input_chars: int = Field(50_000, ge=2000, description="Most input sent to a model.")
    max_verbatim_chars: int = Field(
        6000, ge=200, description="A file's relevant range kept verbatim in a model summary."
    )
    max_output_bytes: int = Field(16 * 1024 * 1024, ge=1024, description="Hard cap on one output.")

    # Providers
    main_provider: ProviderName | None = Field(None, description="The agent's main provider.")
    summary_provider: ProviderName | None = Field(None, description="Summaries; else main.")
    failover_provider: ProviderName | None = Field(
        None, description="Tried when the summary provider is down; unset: no failover."
    )
    compaction_provider: ProviderName | None = Field(
        None, description="Compaction summaries; else the summary provider, else main."
    )
    compaction_model: str | None = Field(None, description="Model for compaction; else default.")
    anthropic_api_key: SecretStr | None = Field(None, description="Enables Anthropic.")
    anthropic_base_url: str = Field("https://api.anthropic.com", description="Without /v1.")
    anthropic_model: str = Field("claude-haiku-4-5-20251001", description="Anthropic model.")
    openai_api_key: SecretStr | None = Field(None, description="Enables OpenAI.")
    openai_base_url: str = Field("https://api.openai.com/v1", description="With /v1.")
    openai_model: str = Field("gpt-4.1-mini", description="OpenAI-compatible model.")
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

    # Jobs
    job_deadline_seconds: float = Field(30.0, gt=0, description="Interactive job deadline.")
    batch_deadline_seconds: float = Field(
        86_400.0, gt=0, description="Batch job deadline (batch jobs may queue for long)."
    )
    compaction_deadline_seconds: float = Field(120.0, gt=0, description="Compaction job deadline.")
    compaction_min_messages: int = Field(
        10, ge=0, description="Conversations with fewer messages are handed back uncompacted."
    )
    compaction_summary_ttl_seconds: int = Field(
        7 * 86_400,
        ge=0,
        description="How long a session's last compaction summary is kept for the next; 0: off.",
    )
    cache_ttl_seconds: int = Field(
        86_400, ge=0, description="Reuse model summaries of identical outputs; 0: off."
    )
    result_ttl_seconds: int = Field(86_400, ge=60, description="How long results stay in Redis.")
    payload_ttl_seconds: int = Field(3600, ge=60, description="How long stored outputs stay.")
    visibility_timeout_seconds: int = Field(
        120, ge=1, description="A job unacked this long is redelivered; keep above the longest run."
    )
    max_queue_entry_bytes: int = Field(
        4 * 1024 * 1024,
        ge=64 * 1024,
        description="Queue entries over this are dead-lettered unparsed (a job is 1–2 KB).",
    )
    session_log_dir: Path = Field(Path(".tersify/sessions"), description="Per-session JSONL logs.")
    session_log_max_bytes: int = Field(
        64 * 1024 * 1024, ge=4096, description="A session log past this rotates to a numbered file."
    )
    session_log_retention_days: float = Field(
        30.0, ge=0, description="Session log files untouched this long are deleted; 0: kept."
    )

    # Redaction (owned by worker/redact/)
    redact: str = Field(
        "model",
        pattern=r"^\s*(off|(model|log|result)(\s*,\s*(model|log|result))*)\s*$",
        description="Where secrets become placeholders: model requests (`model`), the session log "
        "(`log`), results (`result`), comma-separated; `off`.",
    )

    # Worker
    worker_pool: Literal["threads", "prefork", "solo", "gevent"] = Field(
        "threads", description="Celery pool."
    )
    worker_concurrency: int = Field(128, ge=1, description="In-flight jobs per worker process.")
    worker_processes: int = Field(
        1, ge=1, description="Processes per `tersify worker`; one per core on a dedicated host."
    )
    worker_prefetch_multiplier: int = Field(
        1, ge=1, description="Messages reserved per slot, the running one included."
    )

    # Per-job options and webhooks (owned by producer/options.py, producer/webhooks.py)
    job_max_budget_chars: int = Field(
        20_000, ge=200, description="Ceiling on a job's budget_chars (extractive and fallback)."
    )
    job_max_summary_chars: int = Field(
        4000, ge=50, description="Ceiling on a job's max_summary_chars."
    )
    job_models: str = Field(
        "", description="Models a job may ask for, comma-separated, besides the configured two."
    )
    webhook_allowed_urls: str = Field(
        "", description="URL prefixes a job's callback_url may start with; empty: webhooks off."
    )
    webhook_secret: SecretStr | None = Field(
        None, description="Signs every webhook POST (HMAC-SHA256); required for webhooks."
    )
    webhook_max_attempts: int = Field(5, ge=1, description="POSTs of one webhook before giving up.")
    webhook_retry_base_seconds: float = Field(
        1.0, gt=0, description="Backoff before the first webhook retry; doubles each time."
    )
    webhook_timeout_seconds: float = Field(5.0, gt=0, description="Longest webhook POST.")

    # MCP proxy (owned by worker/mcp/)
    mcp_intent: str | None = Field(
        None, description="What the agent is after, for every proxied call; else its arguments."
    )
    mcp_session: str | None = Field(
        None, description="Session of the proxy's jobs; unset: a new one per proxy run."
    )
    mcp_wait_seconds: float = Field(
        60.0, gt=0, description="Longest wait for a summary before the full result goes back."
    )

    # Session gate
    gate_lease_seconds: float = Field(
        15.0, gt=0, description="A job's hold, renewed by its worker."
    )
    gate_max_seconds: float = Field(60.0, gt=0, description="Absolute cap on one job's hold.")
    gate_sweep_interval_seconds: float = Field(2.0, gt=0, description="Expired-lease sweep period.")
    gate_fail_open: bool = Field(True, description="Gate reads as open when Redis is down.")
    gate_max_held_inputs: int = Field(
        100, ge=1, description="Held inputs one session may have waiting (past it: 429)."
    )
    gate_max_held_bytes: int = Field(
        4 * 1024 * 1024, ge=1024, description="Total bytes of one session's held input."
    )

    # Quality: grounding of model answers (owned by worker/summarize/grounding.py)
    grounding_max_unsupported: int = Field(
        2, ge=0, description="Unsupported claims that reject a model answer; 0: log, never reject."
    )

    # HTTP API (owned by worker/api/)
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
    tenants: str = Field(
        "",
        description="Tenants and their quotas, `NAME=JOBS_PER_MINUTE/USD_PER_DAY,...` (0: no "
        "limit); a token joins one as `TOKEN[:SCOPE]#NAME` in TERSIFY_API_TOKENS.",
    )
    api_insecure_no_auth: bool = Field(
        False, description="Serve without tokens (loopback only): local development."
    )

    # Cost
    model_prices: str = Field(
        "claude-haiku-4-5-20251001=1.0/5.0,gpt-4.1-mini=0.4/1.6",
        description="USD per million tokens in/out by model, `model=in/out,...` (list prices, "
        "November 2026; set your own): metrics and reprocessing estimates.",
    )

    # Metrics and status (owned by worker/metrics/jobs.py)
    metrics_port: int = Field(
        9808, ge=0, le=65535, description="Worker Prometheus endpoint port; 0: off."
    )
    metrics_host: str = Field(
        "127.0.0.1", description="Address the worker's metrics bind; 0.0.0.0 in containers."
    )
    metrics_recent_fallbacks: int = Field(
        500, ge=10, description="Fallbacks kept in Redis for `tersify status`."
    )
    worker_send_events: bool = Field(
        False, description="Celery task events, for Flower: three broker messages per job."
    )

    # Logging
    log_format: Literal["auto", "json", "console"] = Field("auto", description="auto: TTY→console.")
    log_level: str = Field("INFO", description="Root log level.")

    # Model-API gateway (owned by worker/gateway/)
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
    gateway_session_headers: str = Field(
        "x-tersify-session,x-claude-code-session-id",
        description="Request headers that name the session, first found wins; else it is derived "
        "from the conversation.",
    )
    gateway_skip_tools: str = Field(
        "", description="Tool names whose results always pass whole, comma-separated."
    )
    gateway_upstream_timeout_seconds: float = Field(
        600.0, gt=0, description="Longest silence from the upstream before the gateway gives up."
    )
    gateway_max_body_bytes: int = Field(
        32 * 1024 * 1024,
        ge=1024,
        description="Largest request body the gateway takes (413 past it).",
    )

    def resolved_summary_provider(self) -> ProviderName:
        """The provider summaries use: its own setting, else the main one, else any keyed one."""
        if self.summary_provider is not None:
            return self.summary_provider
        if self.main_provider is not None:
            return self.main_provider
        if self.anthropic_api_key is not None:
            return ProviderName.ANTHROPIC
        if self.openai_api_key is not None:
            return ProviderName.OPENAI
        return ProviderName.EXTRACTIVE

    def resolved_compaction_provider(self) -> ProviderName:
        """The provider compaction uses: its own setting, else the summary provider's choice."""
        return self.compaction_provider or self.resolved_summary_provider()

    def traces_exporter(self) -> str | None:
        """The span exporter the standard ``OTEL_*`` variables ask for, or None (no traces)."""
        env = os.environ  # noqa: TID251 - the settings module is where the environment is read
        if env.get("OTEL_SDK_DISABLED", "").lower() == "true":
            return None
        named = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
        if named in {"otlp", "console"}:
            return named
        endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        return "otlp" if not named and any(env.get(k) for k in endpoints) else None

    def child_env(self, **overrides: str) -> dict[str, str]:
        """The environment for a child process: this one's, with ``TERSIFY_*`` overrides."""
        env = dict(os.environ)  # noqa: TID251 - the settings module is where the environment is read
        env.update({f"TERSIFY_{name.upper()}": value for name, value in overrides.items()})
        return env
