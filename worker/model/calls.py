"""The one way a job asks a model: each route's guard, retries within the deadline, failover.

Summaries and compactions both come through ``ask``: the first route's provider is tried (its
circuit breaker and rate limit first, retries with backoff while the deadline allows), and the
next route only when the first is down (an outage, an open circuit, an exhausted rate limit).
The caller's ``check`` refuses an answer it cannot use (empty, oversized, ungrounded) by raising
``ProviderError``; such a refusal is final, not a reason to fail over.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import structlog

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.worker.model.circuit import OUTAGE_REASONS
from tersify.worker.model.guard import CallGuard
from tersify.worker.model.providers.base import Completion, ModelRequest, Provider
from tersify.worker.model.retry import RetryPolicy, call_with_retries

log = structlog.get_logger("tersify.model")

# Failures after which the failover provider, when configured, gets the job.
FAILOVER_REASONS = OUTAGE_REASONS | {FallbackReason.CIRCUIT_OPEN, FallbackReason.RATE_LIMITED}

Check = Callable[[Completion], None]


@dataclass(frozen=True, slots=True)
class Route:
    """One way to a model: its provider and the guard (circuit, rate limit) in front of it."""

    provider: Provider
    guard: CallGuard


@dataclass(frozen=True, slots=True)
class RoutedCompletion:
    """A checked completion and the route that gave it."""

    completion: Completion
    route: Route


def retry_policy(settings: Settings) -> RetryPolicy:
    """The model-call retry policy the settings describe."""
    return RetryPolicy(
        attempts=settings.model_max_attempts,
        base_seconds=settings.model_retry_base_seconds,
        max_seconds=settings.model_retry_max_seconds,
    )


def ask(
    routes: Sequence[Route],
    request: ModelRequest,
    *,
    deadline: float,
    settings: Settings,
    check: Check,
    call_timeout: float | None = None,
    first_model: str | None = None,
) -> RoutedCompletion:
    """The first usable answer along ``routes`` before ``deadline`` (monotonic seconds).

    ``call_timeout`` caps one attempt (default ``settings.model_timeout_seconds``). Raises the
    last ``ProviderError`` when no route answers usably; ``DEADLINE`` when time ran out first.
    ``first_model`` (a job's own model) is asked of the first route only: a failover route
    keeps its configured model.
    """
    if not routes:
        raise ProviderError(FallbackReason.INTERNAL_ERROR, "no model route configured")
    if deadline <= time.monotonic():
        raise ProviderError(FallbackReason.DEADLINE, "the job's deadline had passed")
    cap = call_timeout or settings.model_timeout_seconds
    error = ProviderError(FallbackReason.INTERNAL_ERROR, "no route was tried")
    for index, route in enumerate(routes):
        try:
            asked = replace(request, model=first_model) if index == 0 and first_model else request
            completion = _ask_route(route, asked, deadline, settings, cap)
            check(completion)
            return RoutedCompletion(completion, route)
        except ProviderError as failure:
            error = failure
            error.provider = error.provider or route.provider.name
            if error.reason not in FAILOVER_REASONS or index == len(routes) - 1:
                break
            log.warning("model_failover", failed=route.provider.name, reason=error.reason.value)
    raise error


def _ask_route(
    route: Route, request: ModelRequest, deadline: float, settings: Settings, cap: float
) -> Completion:
    """One provider's answer, with retries; ``ProviderError`` when there is none."""
    last_timeout = cap

    def send() -> Completion:
        nonlocal last_timeout
        # Measured at send time: the rate limit may have made this attempt wait.
        last_timeout = min(cap, deadline - time.monotonic())
        return route.provider.complete(request, last_timeout)

    def attempt(_seconds_left: float) -> Completion:
        return route.guard.call(send, request, deadline=deadline)

    try:
        return call_with_retries(attempt, deadline=deadline, policy=retry_policy(settings))
    except ProviderError as error:
        if error.reason is FallbackReason.TIMEOUT and last_timeout < cap:
            raise ProviderError(
                FallbackReason.DEADLINE, "the job's deadline cut the model call"
            ) from None
        raise
