"""What could stop a configuration from working, found before any job is taken.

Each check returns ``Finding``s: ``ok``, ``warn`` (the process runs, degraded: say so) or
``fail`` (it would take work it cannot do: refuse to start). What is a failure depends on who
asks (``Role``): a worker refuses a provider without its key, the API only warns about
webhooks it cannot sign. Secrets are never shown, only whether they are set.
"""

from __future__ import annotations

import os
import tempfile
from enum import StrEnum
from pathlib import Path

import redis
import redis.retry
from redis.backoff import NoBackoff

from tersify.client import Producer
from tersify.contract import Queue
from tersify.errors import ConfigurationError
from tersify.settings import Settings
from tersify.store import keys
from tersify.store.redis_url import (
    close,
    configuration_mistake,
    failure_reason,
    redis_client,
    shown_url,
    sync_client,
)
from tersify.worker.model.providers import (
    PROVIDERS,
    Finding,
    Level,
    compaction_provider,
    kind,
    summary_provider,
)
from tersify.worker.model.providers.checks import PROBE_SECONDS, is_loopback, unreachable
from tersify.worker.model.providers.registry import named, unknown_names, used


class Role(StrEnum):
    """Who runs the checks; it decides which run and which refuse."""

    WORKER = "worker"
    API = "api"
    MCP = "mcp-proxy"
    DOCTOR = "doctor"


def run(settings: Settings, role: Role) -> list[Finding]:
    """Every check ``role`` needs, in the order a user would fix them."""
    found = [redis_check(settings, role), *settings_check(settings)]
    if role in (Role.WORKER, Role.DOCTOR):
        found += provider_checks(settings, asking=role is Role.DOCTOR)
    if role is not Role.MCP:
        found.append(webhook_check(settings, role))
        found.append(session_log_check(settings, role))
    if role is not Role.WORKER and found[0].level is Level.OK:
        found.append(workers_check(settings, role))
    if role is Role.DOCTOR:
        found.append(gateway_check(settings))
    return found


def gateway_check(settings: Settings) -> Finding:
    """Where ``tersify gateway`` would forward (each upstream an http(s) URL with a host, which
    the settings already made sure of); an upstream on this machine must answer."""
    upstreams = {
        "TERSIFY_GATEWAY_ANTHROPIC_UPSTREAM": settings.gateway_anthropic_upstream,
        "TERSIFY_GATEWAY_OPENAI_UPSTREAM": settings.gateway_openai_upstream,
    }
    for variable, url in upstreams.items():
        why = unreachable(url, PROBE_SECONDS) if is_loopback(url) else None
        if why is not None:
            return Finding(
                "gateway", Level.WARN, f"cannot reach {url} ({why}): fix {variable} or start it"
            )
    return Finding(
        "gateway",
        Level.OK,
        f"`tersify gateway` forwards to {settings.gateway_anthropic_upstream} (Anthropic) and "
        f"{settings.gateway_openai_upstream} (OpenAI), tool results over "
        f"{settings.gateway_threshold_chars:,} chars summarized",
    )


def redis_check(settings: Settings, role: Role = Role.DOCTOR) -> Finding:
    """Redis answers at ``TERSIFY_REDIS_URL``, and which server it is (address, version).

    Asked with short timeouts and no retry, so a port where something else listens is told in
    seconds. Out of reach, it fails ``doctor`` (nothing can work) and warns the others (they
    keep trying); a refused password or database number fails everyone: a setting is wrong.
    """
    where = shown_url(settings.redis_url)
    client = sync_client(
        settings,
        socket_timeout=PROBE_SECONDS,
        socket_connect_timeout=PROBE_SECONDS,
        retry=redis.retry.Retry(NoBackoff(), 0),
    )
    try:
        info = client.info("server")
    except (redis.RedisError, OSError) as exc:
        if (mistake := configuration_mistake(settings.redis_url, exc)) is not None:
            return Finding("redis", Level.FAIL, mistake)
        level = Level.FAIL if role is Role.DOCTOR else Level.WARN
        what = (
            f"something at {where} answers, but not as Redis does ({failure_reason(exc)})"
            if isinstance(exc, redis.ResponseError | redis.exceptions.InvalidResponse)
            else f"cannot reach Redis at {where} ({failure_reason(exc)})"
        )
        return Finding(
            "redis",
            level,
            f"{what}: start redis-server there, or point TERSIFY_REDIS_URL at a running one",
        )
    finally:
        close(client)
    info = info if isinstance(info, dict) else {}
    server = f"Redis {info.get('redis_version', '?')} ({info.get('redis_mode', 'standalone')}"
    port = info.get("tcp_port")
    server += f", port {port})" if port else ")"
    return Finding("redis", Level.OK, f"{server} answers at {where}")


def provider_checks(settings: Settings, *, asking: bool = False) -> list[Finding]:
    """Every provider a setting names exists and has what it needs (a key); each provider
    jobs will call can be reached. Each provider's own checks say what that means for it."""
    found: list[Finding] = []
    chosen = named(settings)
    calls = used(settings)
    for name in dict.fromkeys([*chosen, *calls]):
        try:
            provider = kind(name, chosen.get(name, "the provider"))
            found += provider.checks(
                settings, named_by=chosen.get(name), used=name in calls, asking=asking
            )
        except ConfigurationError as exc:
            found.append(Finding("provider", Level.FAIL, str(exc)))
    if not any(f.check == "provider" for f in found):
        summary = summary_provider(settings)
        model = PROVIDERS[summary].configured_model(settings)
        detail = f"summaries by {summary}" + (f" ({model})" if model else " (built in, no key)")
        found.insert(0, Finding("provider", Level.OK, detail))
    return found


def settings_check(settings: Settings) -> list[Finding]:
    """``TERSIFY_*`` names nothing reads (a misspelling is ignored in silence otherwise)."""
    found = []
    for name, closest in unknown_names(settings):
        hint = f": did you mean {closest}?" if closest else ": no setting has this name"
        found.append(Finding("settings", Level.WARN, f"{name} is not a tersify setting{hint}"))
    return found


def webhook_check(settings: Settings, role: Role) -> Finding:
    """Webhooks that are on can be signed (else they would wait in Redis, never sent)."""
    if settings.webhook_secret is not None:
        return Finding("webhooks", Level.OK, "signed with TERSIFY_WEBHOOK_SECRET")
    if not settings.webhook_allowed_urls:
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
    summary = summary_provider(settings)
    compaction = compaction_provider(settings)
    described = {
        "model": None,
        "base_url": None,
        "api_key": None,
        **kind(summary).described(settings),
    }
    return {
        "provider": summary,
        **{k: None if v is None else str(v) for k, v in described.items()},
        "failover_provider": settings.failover_provider,
        "compaction_provider": compaction,
        "compaction_model": settings.compaction_model
        or kind(compaction).configured_model(settings),
        "session_log_dir": str(settings.session_log_dir),
        "redis": shown_url(settings.redis_url),
        "redact": ",".join(sorted(settings.redact)) or "off",
        "webhooks": "on" if settings.webhook_secret is not None else "off",
    }
