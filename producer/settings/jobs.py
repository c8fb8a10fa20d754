"""Jobs: deadlines, how long what a job leaves in Redis is kept, compaction's own knobs."""

from __future__ import annotations

from pydantic import BaseModel, Field


class JobSettings(BaseModel):
    """A job's deadlines and the lifetimes of its payload, result and cached summary."""

    job_deadline_seconds: float = Field(30.0, gt=0, description="Interactive job deadline.")
    batch_deadline_seconds: float = Field(
        86_400.0, gt=0, description="Batch job deadline (batch jobs may queue for long)."
    )
    compaction_deadline_seconds: float = Field(120.0, gt=0, description="Compaction job deadline.")
    compaction_min_messages: int = Field(
        10, ge=0, description="Conversations with fewer messages are handed back uncompacted."
    )
    compaction_summary_ttl_seconds: int = Field(
        7 * 86_400,
        ge=0,
        description="How long a session's last compaction summary is kept for the next; 0: off.",
    )
    compaction_summary_max_chars: int = Field(
        6000,
        ge=2000,
        le=64_000,
        description="Longest compaction summary; open requests quoted in full may exceed it.",
    )
    cache_ttl_seconds: int = Field(
        86_400, ge=0, description="Reuse model summaries of identical outputs; 0: off."
    )
    rerun_window: int = Field(
        20,
        ge=0,
        le=1000,
        description="A command run again within the session's last N summarized runs is "
        "summarized as what changed; 0: off.",
    )
    result_ttl_seconds: int = Field(86_400, ge=60, description="How long results stay in Redis.")
    payload_ttl_seconds: int = Field(3600, ge=60, description="How long stored outputs stay.")
    visibility_timeout_seconds: int = Field(
        120, ge=1, description="A job unacked this long is redelivered; keep above the longest run."
    )
