"""A route to a model: a provider behind the guard every job's call passes (circuit, rate limit).

The breaker and the limiter live in Redis under the provider's name, so every process that
builds a route to the same provider (each worker, ``tersify eval --method model``) shares them.
"""

from __future__ import annotations

from redis import Redis

from tersify.settings import Settings
from tersify.worker.model.calls import Route
from tersify.worker.model.circuit import CircuitBreaker
from tersify.worker.model.guard import CallGuard
from tersify.worker.model.providers.base import Provider
from tersify.worker.model.ratelimit import RateLimiter
from tersify.worker.store.writebehind import WriteBehind


def route(
    settings: Settings, client: Redis, provider: Provider, writes: WriteBehind | None = None
) -> Route:
    """A provider with its shared circuit breaker and, when limits are set, its rate limit."""
    limited = settings.rate_limit_requests_per_minute or settings.rate_limit_tokens_per_minute
    return Route(
        provider,
        CallGuard(
            CircuitBreaker(
                client,
                provider.name,
                threshold=settings.circuit_failure_threshold,
                cooldown=settings.circuit_cooldown_seconds,
                probe=settings.model_timeout_seconds + 5,
                writes=writes,
            ),
            RateLimiter(
                client,
                provider.name,
                requests_per_minute=settings.rate_limit_requests_per_minute,
                tokens_per_minute=settings.rate_limit_tokens_per_minute,
            )
            if limited
            else None,
        ),
    )
