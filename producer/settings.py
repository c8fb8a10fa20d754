"""The one settings class: every tunable default, read from ``TERSIFY_*`` environment variables.

Fields are flat (``TERSIFY_ANTHROPIC_API_KEY``, not ``TERSIFY_ANTHROPIC__API_KEY``) because the
variable names are public surface that deploy files and users already rely on. Build one
``Settings()`` at each entry point and pass it down; nothing else reads the environment.
"""

from __future__ import annotations

import os
import typing
from enum import StrEnum
from pathlib import Path
from typing import Literal, Self

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REDIS_SCHEMES = ("redis://", "rediss://", "unix://", "sentinel://")
SESSION_LOG_DEFAULT = "~/.local/state/tersify/sessions"
"""The session-log directory unless set: per user, under ``$XDG_STATE_HOME`` when that is set."""


class ProviderName(StrEnum):
    """Model providers a worker can call."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    EXTRACTIVE = "extractive"


class Settings(BaseSettings):
    """Every tersify default; docs/CONFIGURATION.md lists them."""

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
    max_output_bytes: int = Field(
        16 * 1024 * 1024,
        ge=1024,
        description="Largest output summarized whole; past it the head, the tail and the lines "
        "that matter are (the cut is stated).",
    )

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
    compaction_summary_max_chars: int = Field(
        6000,
        ge=2000,
        le=64_000,
        description="Longest compaction summary; open requests quoted in full may exceed it.",
    )
    cache_ttl_seconds: int = Field(
        86_400, ge=0, description="Reuse model summaries of identical outputs; 0: off."
    )
    rerun_window: int = Field(
        20,
        ge=0,
        le=1000,
        description="A command run again within the session's last N summarized runs is "
        "summarized as what changed; 0: off.",
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
    session_log_dir: Path = Field(
        Path(SESSION_LOG_DEFAULT),
        description="Per-session JSONL logs: an absolute path (`~` expanded), the same for every "
        "command; unset: under `$XDG_STATE_HOME` when that is set.",
    )
    session_log_max_bytes: int = Field(
        64 * 1024 * 1024, ge=4096, description="A session log past this rotates to a numbered file."
    )
    session_log_retention_days: float = Field(
        30.0, ge=0, description="Session log files untouched this long are deleted; 0: kept."
    )
    session_log_pending_max_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="Passthrough outputs waiting in Redis for the session log; oldest go past it.",
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
    api_url: str = Field(
        "",
        description="An API `tersify output` reads through (with TERSIFY_API_TOKEN), scoped to the "
        "token's sessions; unset: it reads Redis directly.",
    )
    api_token: SecretStr | None = Field(
        None, description="The bearer token `tersify output` sends to TERSIFY_API_URL."
    )
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

    # Quotes in model summaries (owned by worker/summarize/)
    max_quote_chars: int = Field(
        1200,
        ge=0,
        description="Output lines a model summary quotes by number, copied exactly, besides its "
        "prose; 0: none.",
    )
    openai_response_format: Literal["json_schema", "json_object", "text"] = Field(
        "json_schema",
        description="How an OpenAI-compatible server is asked for the JSON answer; `text` for "
        "servers that refuse `response_format`.",
    )

    # Re-reads (owned by producer/client/rereads.py)
    keep_read_lines: bool = Field(
        False,
        description="Keep the lines agents read back beside the job in the session log "
        "(redacted as the log is), to turn into corpus cases.",
    )

    # Savings reports (owned by worker/savings/)
    agent_model_prices: str = Field(
        "claude-opus-4-6=5/25,claude-opus-4-5=5/25,claude-opus-4-1=15/75,claude-sonnet-4-5=3/15,"
        "claude-sonnet-4=3/15,claude-haiku-4-5=1/5,gpt-5=1.25/10,gpt-5-codex=1.25/10,"
        "gpt-5-mini=0.25/2,gpt-4.1=2/8,gpt-4.1-mini=0.4/1.6,gemini-2.5-pro=1.25/10,"
        "gemini-3-pro-preview=2/12",
        description="USD per million tokens in/out of the agents' own models, `model=in/out,...` "
        "(list prices; set your own): what `tersify savings` prices saved input tokens at.",
    )

    # Model evaluation (owned by worker/quality/modeleval.py)
    eval_cache_dir: Path = Field(
        Path(".tersify/eval-cache"),
        description="Model answers `tersify eval --method model` keeps per case, model and "
        "prompt version, so a rerun calls no model for them.",
    )
    eval_max_cost_usd: float = Field(
        1.0, ge=0, description="Most a `tersify eval --method model` run spends on model calls."
    )
    # Outputs past the cap, and start-up checks
    max_stored_output_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="How much of an output past TERSIFY_MAX_OUTPUT_BYTES is kept for "
        "`output_ref` reads; the rest is dropped (and said so).",
    )
    allow_missing_key: bool = Field(
        False,
        description="Start a worker whose provider has no API key (every job falls back to "
        "truncation) instead of refusing to start.",
    )

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, url: str) -> str:
        if not url.startswith(REDIS_SCHEMES):
            raise ValueError(
                "not a Redis URL: use redis://HOST:PORT/DB, rediss://HOST:PORT/DB, "
                "unix:///PATH or sentinel://HOST:PORT/PRIMARY"
            )
        return url

    @field_validator("session_log_dir")
    @classmethod
    def _absolute_log_dir(cls, path: Path) -> Path:
        state = os.environ.get("XDG_STATE_HOME", "")  # noqa: TID251 - the settings module reads it
        if path == Path(SESSION_LOG_DEFAULT) and Path(state).is_absolute():
            return Path(state) / "tersify" / "sessions"
        path = path.expanduser()
        if not path.is_absolute():
            raise ValueError(
                "must be an absolute path (every command and worker must find the same files)"
            )
        return path

    @model_validator(mode="after")
    def _stored_cap_holds_the_cap(self) -> Self:
        if self.max_stored_output_bytes < self.max_output_bytes:
            raise ValueError(
                f"TERSIFY_MAX_STORED_OUTPUT_BYTES ({self.max_stored_output_bytes}) must be at "
                f"least TERSIFY_MAX_OUTPUT_BYTES ({self.max_output_bytes})"
            )
        return self

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


def _is_secret(name: str) -> bool:
    field = Settings.model_fields.get(name)
    annotation = field.annotation if field is not None else None
    return annotation is SecretStr or SecretStr in typing.get_args(annotation)


def settings_problem(error: ValidationError) -> str:
    """One line naming each ``TERSIFY_*`` variable ``error`` is about and what is wrong with it.

    Secret values are never shown.
    """
    parts = []
    for item in error.errors(include_url=False):
        where = str(item["loc"][0]) if item["loc"] else ""
        message = str(item["msg"]).removeprefix("Value error, ")
        if message[1:2].islower():  # pydantic's sentences, not a variable's name
            message = message[:1].lower() + message[1:]
        if not where:  # a check across settings names its variables itself
            parts.append(message)
            continue
        shown = "" if _is_secret(where) else f"={item.get('input')!s}"
        parts.append(f"TERSIFY_{where.upper()}{shown}: {message}")
    return "; ".join(parts)


class _DebugOnly(BaseSettings):
    """``TERSIFY_DEBUG`` alone, so it is read even when another setting is invalid."""

    model_config = SettingsConfigDict(env_prefix="TERSIFY_", extra="ignore")

    debug: bool = False


def debug_requested() -> bool:
    """Whether ``TERSIFY_DEBUG`` asks the CLI to show tracebacks (an invalid value: no)."""
    try:
        return _DebugOnly().debug
    except ValidationError:
        return False
