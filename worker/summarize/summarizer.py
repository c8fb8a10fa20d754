"""Turn one job into summary text: the model when one is configured, else the local methods.

A model's answer is prose plus the numbers of the lines that are its evidence; the worker checks
it, copies those lines exactly, and sends a refused answer back once with the reason before it
falls back (``worker.summarize.answers``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from tersify.contract import (
    FallbackReason,
    LineRange,
    Method,
    PendingSummary,
    ToolType,
    WindowRead,
)
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.text.binary import describe as describe_binary
from tersify.worker.model import pricing
from tersify.worker.model.calls import Route, RoutedCompletion
from tersify.worker.model.providers.base import Provider
from tersify.worker.redact import Redactor, Scope
from tersify.worker.shrink import extract, fallback_truncate
from tersify.worker.summarize.asking import AnswerCheck, ask_checked
from tersify.worker.summarize.fit import fitted_request, fitted_settings
from tersify.worker.summarize.grounding import Source, check_grounding, check_source
from tersify.worker.summarize.prompts import SummaryPrompt
from tersify.worker.summarize.windowed import (
    Layout,
    layout,
    past_one_window,
    summarize_windows,
)

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
    cost_usd: float | None = None
    requests: int = 0
    windows: tuple[WindowRead, ...] = ()
    unread_lines: tuple[LineRange, ...] = ()
    rerun_of: str | None = None  # the earlier run's output_ref, when this says what changed


def fallback_outcome(
    job: PendingSummary, tool_type: ToolType, settings: Settings, error: ProviderError
) -> Outcome:
    """The type-aware truncation used when the model cannot help."""
    budget = job_settings(settings, job).local_budget_chars
    text = describe_binary(job.output) or fallback_truncate(
        job.output, tool_type, budget, job.query, job.relevant_lines
    )
    return Outcome(
        text=text,
        method=Method.FALLBACK,
        provider=error.provider,
        fallback_reason=error.reason,
        fallback_detail=error.detail[:200] or None,
    )


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
    if options.model_read_max_chars is not None:
        update["model_read_max_chars"] = options.model_read_max_chars
    return settings.model_copy(update=update) if update else settings


def summarize(
    job: PendingSummary,
    tool_type: ToolType,
    routes: Sequence[Route],
    settings: Settings,
    redactor: Redactor | None = None,
) -> Outcome:
    """Summarize ``job``: extractive without a route, else the model(s), else the fallback.

    ``routes`` is the summary provider, then optionally a failover provider that is tried only
    when the first one is down (outage, open circuit, exhausted rate limit). The model sees the
    job as ``redactor`` (else one of ``settings.redact``) leaves it: secrets as placeholders.
    """
    settings = job_settings(settings, job)
    if (described := describe_binary(job.output)) is not None:  # no model reads garbage
        log.info("binary_output_described", chars_in=len(job.output))
        return Outcome(text=described, method=Method.EXTRACTIVE, provider="extractive")
    if not routes:
        budget = settings.local_budget_chars
        text = extract(job.output, tool_type, budget, job.query, job.relevant_lines)
        return Outcome(text=text, method=Method.EXTRACTIVE, provider="extractive")
    remaining = job.deadline.timestamp() - time.time()
    if remaining <= 0:
        error = ProviderError(FallbackReason.DEADLINE, f"deadline passed {-remaining:.1f}s ago")
        return fallback_outcome(job, tool_type, settings, error)
    sent = (redactor or Redactor(settings.redact)).job(job, Scope.MODEL)
    first_model = job.options.model if job.options is not None else None
    deadline = time.monotonic() + remaining
    provider = routes[0].provider
    asked: Layout | SummaryPrompt | None = None
    try:
        asked = read_plan(sent, tool_type, settings, provider)
        if isinstance(asked, Layout):
            return windows_outcome(asked, sent, tool_type, routes, settings, deadline, first_model)
        return ask_model(asked, sent, routes, settings, deadline, first_model)
    except ProviderError as error:
        if error.reason is FallbackReason.CONTEXT_EXCEEDED and asked is not None:
            try:  # the window is known now: smaller requests
                again = refitted(asked, sent, tool_type, routes, settings, deadline, first_model)
            except ProviderError as refused:
                error = refused
            else:
                if again is not None:
                    return again
        return fallback_outcome(job, tool_type, settings, error)


def read_plan(
    job: PendingSummary, tool_type: ToolType, settings: Settings, provider: Provider
) -> Layout | SummaryPrompt:
    """How ``job`` is read: one request, or windows no larger than ``provider``'s context
    window holds (a context under one window turns a request it would cut into windows)."""
    if past_one_window(job, settings):
        found = layout(job, tool_type, fitted_settings(job, tool_type, settings, provider))
        if found is not None:
            return found
    prompt = fitted_request(job, tool_type, settings, provider)
    if prompt.request.input_truncated and not past_one_window(job, settings):
        return layout(job, tool_type, fitted_settings(job, tool_type, settings, provider)) or prompt
    return prompt


def refitted(
    asked: Layout | SummaryPrompt,
    job: PendingSummary,
    tool_type: ToolType,
    routes: Sequence[Route],
    settings: Settings,
    deadline: float,
    first_model: str | None,
) -> Outcome | None:
    """``job`` asked again in requests sized to the context window its first provider has
    learned; None when they would be no smaller than ``asked``."""
    provider = routes[0].provider
    if isinstance(asked, Layout):
        refit = layout(job, tool_type, fitted_settings(job, tool_type, settings, provider))
        if refit is None or refit.window_chars >= asked.window_chars:
            return None
        log.info("summary_windows_refitted", windows=len(refit.plan.windows))
        return windows_outcome(refit, job, tool_type, routes, settings, deadline, first_model)
    prompt = fitted_request(job, tool_type, settings, provider)
    if len(prompt.request.user) >= len(asked.request.user):
        return None
    log.info("summary_request_refitted", chars=len(prompt.request.user))
    return ask_model(prompt, job, routes, settings, deadline, first_model)


def windows_outcome(
    found: Layout,
    job: PendingSummary,
    tool_type: ToolType,
    routes: Sequence[Route],
    settings: Settings,
    deadline: float,
    first_model: str | None,
) -> Outcome:
    """The model's summary of an output read in windows (``worker.summarize.windowed``)."""
    text, last, checks, read, unread = summarize_windows(
        found, job, tool_type, routes, settings, deadline, first_model
    )
    return model_outcome(
        text, last, checks, settings, windows=tuple(read), unread_lines=tuple(unread)
    )


def ask_model(
    prompt: SummaryPrompt,
    job: PendingSummary,
    routes: Sequence[Route],
    settings: Settings,
    deadline: float,
    first_model: str | None,
    source: Source | None = None,
) -> Outcome:
    """The model's summary of ``job``; an answer refused is sent back once with the reason.

    ``source``: what the prose is grounded in, when the model read more than the job."""
    check = AnswerCheck(
        prompt,
        prose_cap=settings.max_summary_chars,
        quote_budget=settings.max_quote_chars,
        ground=lambda prose: check_answer(prose, job, settings, source),
        size_cap=len(job.output),
    )
    answer = ask_checked(prompt, check, routes, settings, deadline, first_model)
    if check.answer is not None and check.answer.needs_full_output:
        log.info("summary_needs_full_output")
    return model_outcome(check.text, answer, [check], settings)


def model_outcome(
    text: str,
    answer: RoutedCompletion,
    checks: Sequence[AnswerCheck],
    settings: Settings,
    **more: Any,
) -> Outcome:
    """A model's summary, with the tokens and the cost of every request behind it."""
    tokens_in = _summed(check.tokens("input_tokens") for check in checks)
    tokens_out = _summed(check.tokens("output_tokens") for check in checks)
    provider = answer.route.provider.name
    model = answer.completion.model
    usd = pricing.cost(settings, model, tokens_in or 0, tokens_out or 0, provider=provider)
    return Outcome(
        text=text,
        method=Method.LLM,
        provider=provider,
        model=model,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=usd,
        requests=sum(len(check.completions) for check in checks),
        **more,
    )


def _summed(counts: Iterable[int | None]) -> int | None:
    found = [count for count in counts if count is not None]
    return sum(found) if found else None


def check_answer(
    text: str, job: PendingSummary, settings: Settings, source: Source | None = None
) -> None:
    """Refuse an answer's prose over the summary cap, or making claims the output (or
    ``source``, what the model was shown) lacks."""
    if len(text) > settings.max_summary_chars:
        raise ProviderError(
            FallbackReason.OVERSIZED,
            f"the prose is {len(text)} chars; the cap is {settings.max_summary_chars}",
        )
    if text and source is not None:
        check_source(text, source, settings)
    elif text:
        check_grounding(text, job, settings)
