"""What a job produced: the versioned ``SummaryResult``."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from tersify.contract.jobs import OutputCut, Versioned
from tersify.contract.kinds import FallbackReason, Method, ToolType


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
    rerun_of: str | None = Field(
        None,
        description="The output_ref of the earlier run of the same command this summary says "
        "what changed since; null: summarized on its own.",
        exclude_if=lambda value: value is None,
    )
