"""What a job sends the model: its one request, or one per window and the merge after them.

``opening_prompts`` builds the requests a job sends before any answer comes back, exactly as
the summarizer would (``tersify eval --method model-input`` scores their union); ``estimate``
adds the merge a windowed job sends after them, for what reports and budgets count before
anything is spent (``tersify savings``, ``eval --method model``, ``reprocess --dry-run``).
"""

from __future__ import annotations

from dataclasses import dataclass

from tersify.contract import PendingSummary, ToolType
from tersify.settings import Settings
from tersify.worker.model.tokens import CHARS_PER_TOKEN, estimate_tokens
from tersify.worker.summarize.fit import settings_request
from tersify.worker.summarize.merge import window_prompt
from tersify.worker.summarize.prompts import SummaryPrompt
from tersify.worker.summarize.windowed import layout

_PART_HEAD_CHARS = 120
"""A part's line in the merge request, besides its prose and its lines."""


@dataclass(frozen=True, slots=True)
class Sending:
    """What one job sends and may get back: requests, tokens in and at most out, chars."""

    requests: int
    input_tokens: int
    output_tokens: int  # each answer at the longest summary
    chars: int
    answer_cap: int  # one answer's max_tokens: ``requests * answer_cap`` bounds what comes back


def opening_prompts(
    job: PendingSummary, tool_type: ToolType, settings: Settings
) -> list[SummaryPrompt]:
    """The requests ``job`` sends before any answer: one, or one per window it reads."""
    found = layout(job, tool_type, settings)
    if found is None:
        return [settings_request(job, tool_type, settings)]
    return [
        window_prompt(
            job,
            tool_type,
            found.plan,
            number,
            max_summary_chars=settings.max_summary_chars,
            max_quote_chars=settings.max_quote_chars,
        )
        for number in range(len(found.plan.windows))
    ]


def estimate(job: PendingSummary, tool_type: ToolType, settings: Settings) -> Sending:
    """An upper bound on what ``job`` costs: every request's tokens in, and each answer at
    the longest summary; a windowed job's merge reads the windows' answers at their longest."""
    prompts = opening_prompts(job, tool_type, settings)
    chars = sum(len(p.request.system) + len(p.request.user) for p in prompts)
    tokens_in = sum(
        estimate_tokens(p.request.system) + estimate_tokens(p.request.user) for p in prompts
    )
    answer = settings.max_summary_chars + settings.max_quote_chars
    requests = len(prompts)
    if requests > 1:  # the merge: the first window's instructions, every window's answer
        merge = len(prompts[0].request.system) + requests * (answer + _PART_HEAD_CHARS)
        chars += merge
        tokens_in += -(-merge // CHARS_PER_TOKEN)
        requests += 1
    tokens_out = requests * -(-settings.max_summary_chars // CHARS_PER_TOKEN)
    return Sending(requests, tokens_in, tokens_out, chars, prompts[0].request.max_tokens)
