"""Turn one job into summary text: the model when one is configured, else the local methods."""

from __future__ import annotations

import time
from dataclasses import dataclass

from producer.contract import FallbackReason, Method, PendingSummary, ToolType
from producer.errors import ProviderError
from producer.settings import Settings
from worker.extractive import extract
from worker.fallback import fallback_truncate
from worker.grounding import check_grounding
from worker.guard import CallGuard
from worker.prompts import build_request
from worker.providers.base import Completion, Provider
from worker.retry import RetryPolicy, call_with_retries


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


def fallback(
    job: PendingSummary, tool_type: ToolType, settings: Settings, error: ProviderError
) -> Outcome:
    """The type-aware truncation used when the model cannot help."""
    text = fallback_truncate(job.output, tool_type, settings.local_budget_chars, job.query)
    return Outcome(
        text=text,
        method=Method.FALLBACK,
        fallback_reason=error.reason,
        fallback_detail=error.detail[:200] or None,
    )


def summarize(
    job: PendingSummary,
    tool_type: ToolType,
    provider: Provider | None,
    settings: Settings,
    guard: CallGuard | None = None,
) -> Outcome:
    """Summarize ``job``: extractive without a provider, else the model, else the fallback."""
    if provider is None:
        text = extract(job.output, tool_type, settings.local_budget_chars, job.query)
        return Outcome(text=text, method=Method.EXTRACTIVE, provider="extractive")
    remaining = job.deadline.timestamp() - time.time()
    if remaining <= 0:
        error = ProviderError(FallbackReason.DEADLINE, f"deadline passed {-remaining:.1f}s ago")
        return fallback(job, tool_type, settings, error)
    request = build_request(
        job,
        tool_type,
        max_input_chars=settings.max_model_input_chars,
        max_summary_chars=settings.max_summary_chars,
    )
    last_timeout = settings.model_timeout_seconds
    deadline = time.monotonic() + remaining
    guard = guard or CallGuard()

    def send() -> Completion:
        nonlocal last_timeout
        # Measured at send time: the rate limit may have made this attempt wait.
        last_timeout = min(settings.model_timeout_seconds, deadline - time.monotonic())
        return provider.complete(request, last_timeout)

    def attempt(_seconds_left: float) -> Completion:
        return guard.call(send, request, deadline=deadline)

    try:
        completion = call_with_retries(attempt, deadline=deadline, policy=retry_policy(settings))
        text = completion.text.strip()
        check_answer(text, job, settings)
    except ProviderError as error:
        if error.reason is FallbackReason.TIMEOUT and last_timeout < settings.model_timeout_seconds:
            error = ProviderError(FallbackReason.DEADLINE, "the job's deadline cut the model call")
        return fallback(job, tool_type, settings, error)
    return Outcome(
        text=text,
        method=Method.LLM,
        provider=provider.name,
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
