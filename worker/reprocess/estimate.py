"""Token and cost estimates made before anything is spent."""

from __future__ import annotations

from dataclasses import dataclass

from tersify.classify import classify
from tersify.settings import Settings
from tersify.worker.model import pricing
from tersify.worker.reprocess.reader import ArchivedJob
from tersify.worker.summarize.sending import estimate


@dataclass(frozen=True)
class Estimate:
    """Estimated model tokens of some jobs and what they cost."""

    jobs: int
    input_tokens: int
    output_tokens: int
    usd: float
    requests: int = 0


def cost(settings: Settings, input_tokens: int, output_tokens: int) -> float:
    """USD for these tokens on the configured summary provider (0 for the local extractive)."""
    return pricing.estimate(settings, input_tokens, output_tokens)


def estimate_job(settings: Settings, item: ArchivedJob) -> Estimate:
    """A job's estimate: every request it sends in (each window's and the merge's for an
    output read in windows), the longest summary out for each; passthrough is free."""
    job = item.job
    if len(job.output) <= settings.summarize_threshold_chars:
        return Estimate(1, 0, 0, 0.0)
    sent = estimate(job, classify(job.tool_name, job.command, job.output), settings)
    usd = cost(settings, sent.input_tokens, sent.output_tokens)
    return Estimate(1, sent.input_tokens, sent.output_tokens, usd, sent.requests)


def estimate_all(settings: Settings, items: list[ArchivedJob]) -> Estimate:
    """The sum of the jobs' estimates."""
    parts = [estimate_job(settings, item) for item in items]
    tokens_in = sum(p.input_tokens for p in parts)
    tokens_out = sum(p.output_tokens for p in parts)
    usd = cost(settings, tokens_in, tokens_out)
    return Estimate(len(parts), tokens_in, tokens_out, usd, sum(p.requests for p in parts))
