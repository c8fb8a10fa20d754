"""Summary requests sized to the model's context window, where the provider knows it.

The output's view is cut to one window (``TERSIFY_MODEL_WINDOW_CHARS``, at most
``TERSIFY_MODEL_READ_MAX_CHARS``); when the provider knows a
smaller window (``Provider.fitting_chars``: set, read from the server, or learned from a
refusal), the view is cut again, in proportion, until the user message fits (a few passes at
most). An output read in windows gets windows no larger than what fits (``fitted_settings``):
more of them, each whole, rather than each cut.
"""

from __future__ import annotations

from tersify.contract import PendingSummary, ToolType
from tersify.settings import Settings
from tersify.worker.model.providers.base import Provider
from tersify.worker.shrink import ModelView, plain_lines
from tersify.worker.summarize.merge import WINDOW_SHAPE
from tersify.worker.summarize.prompts import PART_NOTE, SummaryPrompt, build_request, prompt_for

PASSES = 3
MIN_INPUT_CHARS = 500
"""The least of an output worth a model's reading: below it the fallback does as well."""
MIN_WINDOW_CHARS = 2000
"""The smallest window (``TERSIFY_MODEL_WINDOW_CHARS``' own floor)."""
_LARGEST_PART = PART_NOTE.format(count=999, number=999, first=10**9, last=10**9)


def fitted_settings(
    job: PendingSummary, tool_type: ToolType, settings: Settings, provider: Provider
) -> Settings:
    """``settings`` with one request's window no larger than ``provider``'s context holds
    beside a window request's instructions, headers and answer (unchanged when unknown)."""
    empty = ModelView("", plain_lines([]), frozenset(), truncated=False)
    probe = prompt_for(
        job,
        tool_type,
        empty,
        WINDOW_SHAPE,
        max_summary_chars=settings.max_summary_chars,
        max_quote_chars=settings.max_quote_chars,
        sample=job.output[:4000],
        part=_LARGEST_PART,
    ).request
    room = provider.fitting_chars(probe)
    if room is None:
        return settings
    window = max(MIN_WINDOW_CHARS, room - len(probe.user))
    if window >= settings.model_window_chars:
        return settings
    return settings.model_copy(update={"model_window_chars": window})


def fitted_request(
    job: PendingSummary, tool_type: ToolType, settings: Settings, provider: Provider
) -> SummaryPrompt:
    """``job``'s summary request, its output view cut to fit ``provider``'s window."""
    limit = min(settings.model_window_chars, settings.model_read_max_chars)
    prompt = settings_request(job, tool_type, settings, limit)
    for _ in range(PASSES):
        room = provider.fitting_chars(prompt.request)
        size = len(prompt.request.user)
        if room is None or size <= room or limit <= MIN_INPUT_CHARS:
            break
        limit = max(MIN_INPUT_CHARS, int(limit * room / size * 0.95))
        prompt = settings_request(job, tool_type, settings, limit)
    return prompt


def settings_request(
    job: PendingSummary, tool_type: ToolType, settings: Settings, limit: int | None = None
) -> SummaryPrompt:
    """``job``'s one summary request as ``settings`` size it, its output view at most
    ``limit`` characters (default: one window, within what a job reads)."""
    if limit is None:
        limit = min(settings.model_window_chars, settings.model_read_max_chars)
    return build_request(
        job,
        tool_type,
        max_input_chars=limit,
        max_summary_chars=settings.max_summary_chars,
        max_verbatim_chars=settings.max_verbatim_chars,
        max_quote_chars=settings.max_quote_chars,
    )
