"""Each tool output as tersify would have left it with no model: passed through, or shrunk.

An output at or under ``TERSIFY_SUMMARIZE_THRESHOLD_CHARS`` passes through as it is. A longer
one is classified as a worker classifies it and goes through the summarizer's own path with no
model route, which is what a worker without a provider does (the extractive summarizer, at
``TERSIFY_LOCAL_BUDGET_CHARS``).
"""

from __future__ import annotations

from dataclasses import dataclass

from tersify.classify import classify
from tersify.contract import Method, PendingSummary, ToolType
from tersify.settings import Settings
from tersify.worker.savings.transcript import ToolOutput
from tersify.worker.summarize.summarizer import summarize

_NAME_CHARS = 200  # the job contract's limits on a tool name and a command
_COMMAND_CHARS = 100_000


@dataclass(frozen=True, slots=True)
class Shrunk:
    """What the agent would have read instead of an output, and how it was made."""

    text: str
    method: Method
    tool_type: ToolType
    model: str | None = None


def summarizes(settings: Settings, output: ToolOutput) -> bool:
    """Whether tersify would summarize ``output`` (it is over the threshold)."""
    return len(output.text) > settings.summarize_threshold_chars


def job_of(output: ToolOutput, deadline_seconds: float) -> PendingSummary:
    """The job a producer would have submitted for ``output``."""
    return PendingSummary.build(
        deadline_seconds=deadline_seconds,
        session_id="savings",
        tool_name=output.tool_name[:_NAME_CHARS] or "unknown",
        command=output.command[:_COMMAND_CHARS] if output.command else None,
        output=output.text,
    )


def tool_type_of(output: ToolOutput) -> ToolType:
    """The output's tool type, as a worker classifies it."""
    return classify(output.tool_name, output.command, output.text)


def shrink_locally(settings: Settings, output: ToolOutput) -> Shrunk:
    """``output`` passed through, or shrunk as a worker with no model shrinks it."""
    tool_type = tool_type_of(output)
    if not summarizes(settings, output):
        return Shrunk(output.text, Method.PASSTHROUGH, tool_type)
    outcome = summarize(job_of(output, settings.job_deadline_seconds), tool_type, (), settings)
    return Shrunk(outcome.text, outcome.method, tool_type)
