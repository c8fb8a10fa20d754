"""Each tool output as tersify would have left it with no model: passed through, or shrunk.

An output at or under ``TERSIFY_SUMMARIZE_THRESHOLD_CHARS`` passes through as it is. A longer
one is classified as a worker classifies it and goes through the summarizer's own path with no
model route, which is what a worker without a provider does (the extractive summarizer, at
``TERSIFY_LOCAL_BUDGET_CHARS``); a command run again in its session is told as what changed
since its earlier run when that is shorter, as a worker tells it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tersify.classify import classify
from tersify.client.outputs import new_output_ref
from tersify.contract import Method, PendingSummary, ToolType
from tersify.settings import Settings
from tersify.worker.rerun.history import SessionRuns
from tersify.worker.rerun.summary import summarize_in_session
from tersify.worker.savings.transcript import ToolOutput

_NAME_CHARS = 200  # the job contract's limits on a tool name and a command
_COMMAND_CHARS = 100_000


@dataclass(frozen=True, slots=True)
class Shrunk:
    """What the agent would have read instead of an output, and how it was made."""

    text: str
    method: Method
    tool_type: ToolType
    model: str | None = None
    rerun: bool = False  # told as what changed since an earlier run of the same command


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
        output_ref=new_output_ref(),  # as a producer gives it: a re-run names its earlier one
    )


def tool_type_of(output: ToolOutput) -> ToolType:
    """The output's tool type, as a worker classifies it."""
    return classify(output.tool_name, output.command, output.text)


def shrink_locally(
    settings: Settings, output: ToolOutput, runs: SessionRuns | None = None
) -> Shrunk:
    """``output`` passed through, or shrunk as a worker with no model shrinks it; a command
    run again among ``runs`` (its session's latest) as what changed since its earlier run."""
    tool_type = tool_type_of(output)
    if not summarizes(settings, output):
        return Shrunk(output.text, Method.PASSTHROUGH, tool_type)
    job = job_of(output, settings.job_deadline_seconds)
    outcome = summarize_in_session(job, tool_type, runs or SessionRuns(0), settings)
    return Shrunk(outcome.text, outcome.method, tool_type, rerun=outcome.rerun_of is not None)
