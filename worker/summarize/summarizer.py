"""Turn one job into summary text: the model when one is configured, else the local methods."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import structlog

from producer.contract import FallbackReason, Method, PendingSummary, ToolType
from producer.errors import ProviderError
from producer.settings import Settings
from worker.model.circuit import OUTAGE_REASONS
from worker.model.guard import CallGuard
from worker.model.providers.base import Completion, ModelRequest, Provider
from worker.model.retry import RetryPolicy, call_with_retries
from worker.shrink.extractive import extract
from worker.shrink.fallback import fallback_truncate
from worker.summarize.grounding import check_grounding
from worker.summarize.prompts import build_request, spliced

log = structlog.get_logger("tersify.summarize")


@dataclass(frozen=True, slots=True)
class Outcome:
    """The text of a result and how it was made."""

    text: str
    method: Method
    provider: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    fallback_reason: FallbackReason | None = None
    fallback_detail: str | None = None


def fallback_outcome(
    job: PendingSummary, tool_type: ToolType, settings: Settings, error: ProviderError
) -> Outcome:
    """The type-aware truncation used when the model cannot help."""
    budget = job_settings(settings, job).local_budget_chars
    text = fallback_truncate(job.output, tool_type, budget, job.query, job.relevant_lines)
    return Outcome(
        text=text,
        method=Method.FALLBACK,
        fallback_reason=error.reason,
        fallback_detail=error.detail[:200] or None,
    )


@dataclass(frozen=True, slots=True)
class Route:
    """One way to a model: its provider and the guard (circuit, rate limit) in front of it."""

    provider: Provider
    guard: CallGuard


# Failures after which the failover provider, when configured, gets the job.
FAILOVER_REASONS = OUTAGE_REASONS | {FallbackReason.CIRCUIT_OPEN, FallbackReason.RATE_LIMITED}


def job_settings(settings: Settings, job: PendingSummary) -> Settings:
    """``settings`` with the job's own budget and summary cap (its options) in force."""
    options = job.options
    if options is None:
        return settings
    update: dict[str, int] = {}
    if options.budget_chars is not None:
        update["local_budget_chars"] = options.budget_chars
    if options.max_summary_chars is not None:
        update["max_summary_chars"] = options.max_summary_chars
    return settings.model_copy(update=update) if update else settings


def summarize(
    job: PendingSummary, tool_type: ToolType, routes: Sequence[Route], settings: Settings
) -> Outcome:
    """Summarize ``job``: extractive without a route, else the model(s), else the fallback.

    ``routes`` is the summary provider, then optionally a failover provider that is tried only
    when the first one is down (outage, open circuit, exhausted rate limit).
    """
    settings = job_settings(settings, job)
    if not routes:
        budget = settings.local_budget_chars
        text = extract(job.output, tool_type, budget, job.query, job.relevant_lines)
        return Outcome(text=text, method=Method.EXTRACTIVE, provider="extractive")
    remaining = job.deadline.timestamp() - time.time()
    if remaining <= 0:
        error = ProviderError(FallbackReason.DEADLINE, f"deadline passed {-remaining:.1f}s ago")
        return fallback_outcome(job, tool_type, settings, error)
    request = build_request(
        job,
        tool_type,
        max_input_chars=settings.max_model_input_chars,
        max_summary_chars=settings.max_summary_chars,
        max_verbatim_chars=settings.max_verbatim_chars,
    )
    deadline = time.monotonic() + remaining
    chosen = job.options.model if job.options is not None else None
    for index, route in enumerate(routes):
        # the job's model is the summary provider's; a failover provider keeps its own
        asked = replace(request, model=chosen) if index == 0 and chosen else request
        try:
            return _ask(route, asked, job, settings, deadline)
        except ProviderError as failure:
            error = failure
            if error.reason not in FAILOVER_REASONS or index == len(routes) - 1:
                break
            log.warning("model_failover", failed=route.provider.name, reason=error.reason.value)
    return fallback_outcome(job, tool_type, settings, error)


def _ask(
    route: Route, request: ModelRequest, job: PendingSummary, settings: Settings, deadline: float
) -> Outcome:
    """One provider's answer (with retries), checked; ``ProviderError`` when there is none."""
    last_timeout = settings.model_timeout_seconds

    def send() -> Completion:
        nonlocal last_timeout
        # Measured at send time: the rate limit may have made this attempt wait.
        last_timeout = min(settings.model_timeout_seconds, deadline - time.monotonic())
        return route.provider.complete(request, last_timeout)

    def attempt(_seconds_left: float) -> Completion:
        return route.guard.call(send, request, deadline=deadline)

    try:
        completion = call_with_retries(attempt, deadline=deadline, policy=retry_policy(settings))
    except ProviderError as error:
        if error.reason is FallbackReason.TIMEOUT and last_timeout < settings.model_timeout_seconds:
            raise ProviderError(
                FallbackReason.DEADLINE, "the job's deadline cut the model call"
            ) from None
        raise
    text = completion.text.strip()
    check_answer(text, job, settings)
    if request.splice:
        text = spliced(text, request.splice)  # a file's relevant range, verbatim, between
    return Outcome(
        text=text,
        method=Method.LLM,
        provider=route.provider.name,
        model=completion.model,
        input_tokens=completion.input_tokens,
        output_tokens=completion.output_tokens,
    )


def retry_policy(settings: Settings) -> RetryPolicy:
    """The model-call retry policy the settings describe."""
    return RetryPolicy(
        attempts=settings.model_max_attempts,
        base_seconds=settings.model_retry_base_seconds,
        max_seconds=settings.model_retry_max_seconds,
    )


def check_answer(text: str, job: PendingSummary, settings: Settings) -> None:
    """Refuse an answer that is empty, over the summary cap, or no shorter than the input."""
    if not text:
        raise ProviderError(FallbackReason.EMPTY, "the model answered with no text")
    if len(text) > settings.max_summary_chars:
        raise ProviderError(
            FallbackReason.OVERSIZED, f"{len(text)} chars; the cap is {settings.max_summary_chars}"
        )
    if len(text) >= len(job.output):
        raise ProviderError(FallbackReason.OVERSIZED, "the answer is not shorter than the input")
    check_grounding(text, job, settings)
