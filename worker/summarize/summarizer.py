"""Turn one job into summary text: the model when one is configured, else the local methods.

A model's answer is prose plus the numbers of the lines that are its evidence; the worker checks
it, copies those lines exactly, and sends a refused answer back once with the reason before it
falls back (``worker.summarize.answers``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import structlog

from tersify.contract import FallbackReason, Method, PendingSummary, ToolType
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.text.binary import describe as describe_binary
from tersify.worker.model.calls import Route, ask
from tersify.worker.model.providers.base import Completion, Correction
from tersify.worker.redact import Redactor, Scope
from tersify.worker.shrink import extract, fallback_truncate
from tersify.worker.summarize.answers import compose, read_answer
from tersify.worker.summarize.fit import fitted_request
from tersify.worker.summarize.grounding import Source, check_grounding, check_source
from tersify.worker.summarize.prompts import SummaryPrompt

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
    prompt = fitted_request(sent, tool_type, settings, routes[0].provider)
    first_model = job.options.model if job.options is not None else None
    deadline = time.monotonic() + remaining
    try:
        return ask_model(prompt, sent, routes, settings, deadline, first_model)
    except ProviderError as error:
        if error.reason is FallbackReason.CONTEXT_EXCEEDED:  # the window is known now
            refit = fitted_request(sent, tool_type, settings, routes[0].provider)
            if len(refit.request.user) < len(prompt.request.user):
                log.info("summary_request_refitted", chars=len(refit.request.user))
                try:
                    return ask_model(refit, sent, routes, settings, deadline, first_model)
                except ProviderError as again:
                    error = again
        return fallback_outcome(job, tool_type, settings, error)


class AnswerCheck:
    """Reads and checks each answer to one prompt (``ask``'s ``check``): keeps the summary
    built from the answer it accepts, every answer's usage, and the answer it last refused.

    The prose is grounded in ``source`` when given (what the model was shown besides the
    job's output), else in the job."""

    def __init__(
        self,
        prompt: SummaryPrompt,
        job: PendingSummary,
        settings: Settings,
        source: Source | None = None,
    ) -> None:
        self.prompt = prompt
        self.job = job
        self.settings = settings
        self.source = source
        self.text = ""
        self.completions: list[Completion] = []
        self.refused: tuple[Completion, ProviderError] | None = None

    def __call__(self, completion: Completion) -> None:
        """Accept ``completion`` (its summary kept in ``text``) or raise why not."""
        self.completions.append(completion)
        try:
            self.text = self.summary(completion)
        except ProviderError as error:
            self.refused = (completion, error)
            raise

    def summary(self, completion: Completion) -> str:
        """The summary an answer makes: checked prose, then the lines it quotes, exactly."""
        answer = read_answer(completion, self.prompt.shape, self.prompt.view)
        check_answer(answer.prose_text, self.job, self.settings, self.source)
        text = compose(answer, self.prompt.view, self.settings.max_quote_chars)
        if len(text) >= len(self.job.output):
            raise ProviderError(
                FallbackReason.OVERSIZED, "the summary is not shorter than the output: say less"
            )
        if answer.needs_full_output:
            log.info("summary_needs_full_output")
        return text

    def tokens(self, field: str) -> int | None:
        """A usage count summed over every answer (None when no answer reported it)."""
        counts = [getattr(c, field) for c in self.completions if getattr(c, field) is not None]
        return sum(counts) if counts else None


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
    check = AnswerCheck(prompt, job, settings, source)
    request = prompt.request
    for attempt in (1, 2):
        try:
            answer = ask(
                routes,
                request,
                deadline=deadline,
                settings=settings,
                check=check,
                first_model=first_model,
            )
            break
        except ProviderError as error:
            refused, check.refused = check.refused, None
            if attempt == 2 or refused is None or refused[1] is not error:
                raise
            log.info("summary_answer_refused", reason=error.reason.value, detail=error.detail)
            request = replace(request, correction=Correction(refused[0], correction(error)))
    return Outcome(
        text=check.text,
        method=Method.LLM,
        provider=answer.route.provider.name,
        model=answer.completion.model,
        input_tokens=check.tokens("input_tokens"),
        output_tokens=check.tokens("output_tokens"),
    )


def correction(error: ProviderError) -> str:
    """What the model is told of its refused answer."""
    return (
        f"That answer was refused: {error.detail}. Answer again with the whole JSON object, "
        "corrected."
    )


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
