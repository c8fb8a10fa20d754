"""Token and cost estimates made before anything is spent."""

from __future__ import annotations

from dataclasses import dataclass

from tersify.settings import Settings
from tersify.worker.model import pricing
from tersify.worker.model.tokens import estimate_tokens
from tersify.worker.reprocess.reader import ArchivedJob


@dataclass(frozen=True)
class Estimate:
    """Estimated model tokens of some jobs and what they cost."""

    jobs: int
    input_tokens: int
    output_tokens: int
    usd: float


def cost(settings: Settings, input_tokens: int, output_tokens: int) -> float:
    """USD for these tokens on the configured summary provider (0 for the local extractive)."""
    return pricing.estimate(settings, input_tokens, output_tokens)


def estimate_job(settings: Settings, item: ArchivedJob) -> Estimate:
    """A job's estimate: the capped request in, the longest summary out; passthrough is free."""
    job = item.job
    if len(job.output) <= settings.summarize_threshold_chars:
        return Estimate(1, 0, 0, 0.0)
    output = job.output[: settings.model_window_chars]
    tokens_in = estimate_tokens(output + (job.command or "") + (job.query or ""))
    tokens_out = estimate_tokens(output[: settings.max_summary_chars])
    return Estimate(1, tokens_in, tokens_out, cost(settings, tokens_in, tokens_out))


def estimate_all(settings: Settings, items: list[ArchivedJob]) -> Estimate:
    """The sum of the jobs' estimates."""
    parts = [estimate_job(settings, item) for item in items]
    tokens_in = sum(p.input_tokens for p in parts)
    tokens_out = sum(p.output_tokens for p in parts)
    return Estimate(len(parts), tokens_in, tokens_out, cost(settings, tokens_in, tokens_out))
