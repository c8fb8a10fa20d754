"""What a job produced: the versioned ``SummaryResult``."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tersify.contract.jobs import LineRange, OutputCut, Versioned
from tersify.contract.kinds import FallbackReason, Method, ToolType


class WindowRead(BaseModel):
    """One window of an output read in windows: its lines, its size, and what read it (the
    model, or the extractive summarizer when the model's reading failed)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lines: LineRange
    chars: int = Field(ge=0, description="The window's text as sent, line numbers included.")
    read_by: Literal["model", "extractive"]


class SummaryResult(Versioned):
    """What a job produced: the short text plus how it was made."""

    job_id: str
    session_id: str
    tool_call_id: str | None = None
    text: str
    method: Method
    tool_type: ToolType
    provider: str | None = None
    model: str | None = None
    chars_in: int = Field(ge=0)
    chars_out: int = Field(ge=0)
    input_tokens: int | None = None
    output_tokens: int | None = None
    fallback_reason: FallbackReason | None = None
    fallback_detail: str | None = None
    decoded_with_replacement: bool = False
    tenant: str | None = None
    late: bool = False
    queued_at: datetime
    started_at: datetime
    finished_at: datetime
    output_ref: str | None = Field(
        None, description="Reads the full output back (null for passthrough: the text is it)."
    )
    cut: OutputCut | None = Field(
        None, description="How an output past TERSIFY_MAX_OUTPUT_BYTES was cut; null: whole."
    )
    cost_usd: float | None = Field(
        None,
        ge=0,
        description="Estimated USD of every model request the job made.",
        exclude_if=lambda value: value is None,
    )
    model_requests: int = Field(
        0,
        ge=0,
        description="Model requests answered (each one billed): every window's, the merge's and "
        "any correction's.",
        exclude_if=lambda value: value == 0,
    )
    windows: list[WindowRead] = Field(
        default_factory=list,
        description="An output past one request's window: the windows read, in order; empty: "
        "read in one request (or by no model).",
        exclude_if=lambda value: not value,
    )
    unread_lines: list[LineRange] = Field(
        default_factory=list,
        description="Lines no model read (past TERSIFY_MODEL_READ_MAX_CHARS); the summary "
        "names them too.",
        exclude_if=lambda value: not value,
    )
    rerun_of: str | None = Field(
        None,
        description="The output_ref of the earlier run of the same command this summary says "
        "what changed since; null: summarized on its own.",
        exclude_if=lambda value: value is None,
    )
