"""What could stop a configuration from working, found before any job is taken.

Each check returns ``Finding``s: ``ok``, ``warn`` (the process runs, degraded: say so) or
``fail`` (it would take work it cannot do: refuse to start). What is a failure depends on who
asks (``Role``): a worker refuses a provider without its key, the API only warns about
webhooks it cannot sign. Secrets are never shown, only whether they are set.
"""

from __future__ import annotations

import os
import socket
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

import redis

from tersify.client import Producer
from tersify.contract import Queue
from tersify.errors import os_reason
from tersify.settings import ProviderName, Settings
from tersify.store import keys
from tersify.store.redis_url import failure_reason, redis_client, shown_url

PROBE_SECONDS = 3.0
"""Longest wait for a model API's host to accept a connection at start."""


class Level(StrEnum):
    """How much a finding matters."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


class Role(StrEnum):
    """Who runs the checks; it decides which run and which refuse."""

    WORKER = "worker"
    API = "api"
    MCP = "mcp-proxy"
    DOCTOR = "doctor"


@dataclass(frozen=True)
class Finding:
    """One check's verdict: what was checked, how it went, and what to do about it."""

    check: str
    level: Level
    detail: str


def run(settings: Settings, role: Role) -> list[Finding]:
    """Every check ``role`` needs, in the order a user would fix them."""
    found = [redis_check(settings)]
    if role in (Role.WORKER, Role.DOCTOR):
        found += provider_checks(settings)
        found += model_api_checks(settings)
    if role is not Role.MCP:
        found.append(webhook_check(settings, role))
        found.append(session_log_check(settings, role))
    if role is not Role.WORKER and found[0].level is Level.OK:
        found.append(workers_check(settings, role))
    return found


def redis_check(settings: Settings) -> Finding:
    """Redis answers at ``TERSIFY_REDIS_URL``."""
    where = shown_url(settings.redis_url)
    client = redis_client(settings)
    try:
        info = client.info("server")
        version = info.get("redis_version", "?") if isinstance(info, dict) else "?"
    except redis.RedisError as exc:
        return Finding(
            "redis",
            Level.WARN,
            f"cannot reach Redis at {where} ({failure_reason(exc)}): start redis-server "
            "there, or point TERSIFY_REDIS_URL at a running one",
        )
    finally:
        client.close()
    return Finding("redis", Level.OK, f"Redis {version} answers at {where}")


_KEYS = {
    ProviderName.ANTHROPIC: "TERSIFY_ANTHROPIC_API_KEY",
    ProviderName.OPENAI: "TERSIFY_OPENAI_API_KEY",
}


def _chosen(settings: Settings) -> dict[ProviderName, str]:
    """The providers the settings name, each with the variable that names it."""
    named = {
        "TERSIFY_SUMMARY_PROVIDER": settings.summary_provider,
        "TERSIFY_MAIN_PROVIDER": settings.main_provider,
        "TERSIFY_FAILOVER_PROVIDER": settings.failover_provider,
        "TERSIFY_COMPACTION_PROVIDER": settings.compaction_provider,
    }
    chosen: dict[ProviderName, str] = {}
    for variable, provider in named.items():
        if provider is not None and provider is not ProviderName.EXTRACTIVE:
            chosen.setdefault(provider, variable)
    return chosen


def _has_key(settings: Settings, provider: ProviderName) -> bool:
    if provider is ProviderName.ANTHROPIC:
        return settings.anthropic_api_key is not None
    return settings.openai_api_key is not None


def provider_checks(settings: Settings) -> list[Finding]:
    """Every provider the settings name has its key (else every job would fall back)."""
    found = []
    for provider, variable in _chosen(settings).items():
        if _has_key(settings, provider):
            continue
        key = _KEYS[provider]
        level = Level.WARN if settings.allow_missing_key else Level.FAIL
        then = (
            "starting anyway (TERSIFY_ALLOW_MISSING_KEY): every job will fall back to truncation"
            if settings.allow_missing_key
            else f"set {key}, or TERSIFY_ALLOW_MISSING_KEY=true to start with fallbacks only"
        )
        found.append(
            Finding("provider", level, f"{variable}={provider} but {key} is unset: {then}")
        )
    summary = settings.resolved_summary_provider()
    if not found:
        model = _model(settings, summary)
        detail = f"summaries by {summary}" + (f" ({model})" if model else " (built in, no key)")
        found.append(Finding("provider", Level.OK, detail))
    return found


def _model(settings: Settings, provider: ProviderName) -> str | None:
    if provider is ProviderName.ANTHROPIC:
        return settings.anthropic_model
    if provider is ProviderName.OPENAI:
        return settings.openai_model
    return None


def base_url(settings: Settings, provider: ProviderName) -> str:
    """Where ``provider``'s API is called."""
    if provider is ProviderName.ANTHROPIC:
        return settings.anthropic_base_url
    return settings.openai_base_url


def model_api_checks(settings: Settings) -> list[Finding]:
    """Each provider that will be called can be reached: a TCP connection to its base URL's
    host and port (no request is sent, so nothing is billed or counted)."""
    used = {settings.resolved_summary_provider(), settings.resolved_compaction_provider()}
    used |= {settings.failover_provider} if settings.failover_provider else set()
    found = []
    for provider in sorted(p for p in used if p is not ProviderName.EXTRACTIVE):
        if not _has_key(settings, provider):
            continue
        url = base_url(settings, provider)
        why = _unreachable(url, min(settings.model_connect_timeout_seconds, PROBE_SECONDS))
        if why is None:
            found.append(
                Finding("model API", Level.OK, f"the {provider} API is reachable at {url}")
            )
            continue
        found.append(
            Finding(
                "model API",
                Level.WARN,
                f"cannot reach the {provider} API at {url} ({why}): jobs will fall back to "
                f"truncation until it answers (TERSIFY_{provider.upper()}_BASE_URL)",
            )
        )
    return found


def _unreachable(url: str, timeout: float) -> str | None:
    """Why no TCP connection to ``url``'s host and port can be made; None when one can."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http(s) URL"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return None
    except TimeoutError:
        return "timed out"
    except (OSError, ValueError) as exc:
        return os_reason(exc) or str(exc) or type(exc).__name__


def webhook_check(settings: Settings, role: Role) -> Finding:
    """Webhooks that are on can be signed (else they would wait in Redis, never sent)."""
    if settings.webhook_secret is not None:
        return Finding("webhooks", Level.OK, "signed with TERSIFY_WEBHOOK_SECRET")
    if not settings.webhook_allowed_urls.strip():
        waiting = waiting_webhooks(settings) if role is not Role.API else 0
        if waiting:
            return Finding(
                "webhooks",
                Level.WARN,
                f"{waiting} webhook deliveries wait in Redis and TERSIFY_WEBHOOK_SECRET is unset "
                "here: only a worker with the secret sends them",
            )
        return Finding("webhooks", Level.OK, "off (TERSIFY_WEBHOOK_ALLOWED_URLS is empty)")
    level = Level.WARN if role is Role.API else Level.FAIL
    return Finding(
        "webhooks",
        level,
        "TERSIFY_WEBHOOK_ALLOWED_URLS is set but TERSIFY_WEBHOOK_SECRET is not: no webhook "
        "could be signed or sent; set the secret (the same on producers and workers), or empty "
        "the allow-list",
    )


def waiting_webhooks(settings: Settings) -> int:
    """Webhook deliveries waiting in Redis (0 when Redis cannot say)."""
    client = redis_client(settings)
    try:
        waiting = client.zcard(keys.WEBHOOKS)
        return waiting if isinstance(waiting, int) else 0
    except redis.RedisError:
        return 0
    finally:
        client.close()


def session_log_check(settings: Settings, role: Role) -> Finding:
    """``TERSIFY_SESSION_LOG_DIR`` can be written, or made (nothing is left behind)."""
    directory = Path(settings.session_log_dir)
    try:
        if directory.is_dir():
            with tempfile.NamedTemporaryFile(dir=directory, prefix=".tersify-check-"):
                pass
            detail = f"{directory} is writable"
        else:
            parent = next(p for p in directory.parents if p.exists())
            if directory.exists() or not parent.is_dir():
                raise NotADirectoryError(20, "not a directory", str(directory))
            if not os.access(parent, os.W_OK | os.X_OK):
                raise PermissionError(13, "permission denied", str(parent))
            detail = f"{directory} will be made on the first write"
    except OSError as exc:
        why = (exc.strerror or type(exc).__name__).lower()
        effect = (
            "forget cannot delete session logs"
            if role is Role.API
            else "full outputs will not be logged"
        )
        return Finding(
            "session log",
            Level.WARN,
            f"cannot write to {directory} ({why}): {effect}; fix it or set TERSIFY_SESSION_LOG_DIR",
        )
    return Finding("session log", Level.OK, detail)


def workers_check(settings: Settings, role: Role) -> Finding:
    """A live worker serves the interactive queue (else jobs would wait)."""
    try:
        with Producer(settings) as producer:
            count = producer.live_workers(Queue.INTERACTIVE)
    except Exception as exc:
        return Finding("workers", Level.WARN, f"cannot count workers: {exc}")
    if count:
        return Finding("workers", Level.OK, f"{count} live worker(s) serve the interactive queue")
    effect = "results pass through unsummarized" if role is Role.MCP else "jobs will wait"
    return Finding(
        "workers",
        Level.WARN,
        f"no live worker serves the interactive queue: {effect} until `tersify worker` runs",
    )


def configuration(settings: Settings) -> dict[str, str | None]:
    """What a worker runs with, for its start-up log: no secret, only whether each is set."""
    summary = settings.resolved_summary_provider()
    compaction = settings.resolved_compaction_provider()
    keyed = summary is not ProviderName.EXTRACTIVE
    return {
        "provider": summary.value,
        "model": _model(settings, summary),
        "base_url": base_url(settings, summary) if keyed else None,
        "api_key": ("set" if _has_key(settings, summary) else "unset") if keyed else None,
        "failover_provider": settings.failover_provider.value
        if settings.failover_provider
        else None,
        "compaction_provider": compaction.value,
        "compaction_model": settings.compaction_model or _model(settings, compaction),
        "session_log_dir": str(settings.session_log_dir),
        "redis": shown_url(settings.redis_url),
        "redact": settings.redact,
        "webhooks": "on" if settings.webhook_secret is not None else "off",
    }
