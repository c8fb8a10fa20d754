"""Turn one job into summary text: the model when one is configured, else the local methods."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from tersify.contract import FallbackReason, Method, PendingSummary, ToolType
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.worker.model.calls import Route, ask
from tersify.worker.redact import Redactor, Scope
from tersify.worker.shrink.extractive import extract
from tersify.worker.shrink.fallback import fallback_truncate
from tersify.worker.summarize.grounding import check_grounding
from tersify.worker.summarize.prompts import build_request, spliced

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
    if not routes:
        budget = settings.local_budget_chars
        text = extract(job.output, tool_type, budget, job.query, job.relevant_lines)
        return Outcome(text=text, method=Method.EXTRACTIVE, provider="extractive")
    remaining = job.deadline.timestamp() - time.time()
    if remaining <= 0:
        error = ProviderError(FallbackReason.DEADLINE, f"deadline passed {-remaining:.1f}s ago")
        return fallback_outcome(job, tool_type, settings, error)
    sent = (redactor or Redactor(Scope.parse(settings.redact))).job(job, Scope.MODEL)
    request = build_request(
        sent,
        tool_type,
        max_input_chars=settings.max_model_input_chars,
        max_summary_chars=settings.max_summary_chars,
        max_verbatim_chars=settings.max_verbatim_chars,
    )
    deadline = time.monotonic() + remaining
    try:
        answer = ask(
            routes,
            request,
            deadline=deadline,
            settings=settings,
            check=lambda completion: check_answer(completion.text.strip(), sent, settings),
            first_model=job.options.model if job.options is not None else None,
        )
    except ProviderError as error:
        return fallback_outcome(job, tool_type, settings, error)
    completion = answer.completion
    text = completion.text.strip()
    if request.splice:
        text = spliced(text, request.splice)  # a file's relevant range, verbatim, between
    return Outcome(
        text=text,
        method=Method.LLM,
        provider=answer.route.provider.name,
        model=completion.model,
        input_tokens=completion.input_tokens,
        output_tokens=completion.output_tokens,
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
