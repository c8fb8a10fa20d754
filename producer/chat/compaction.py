"""The compaction contract: a conversation segment to compact, and what came back.

Messages travel as the caller's own JSON dicts (OpenAI or Anthropic style); the result hands the
new list back in the same shape, so a backend can swap it in without converting anything.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field, JsonValue

# Job and Versioned are the contract's shared bases (frozen, extra="forbid", schema_version
# checked): every job and result speaks the same versioning rules.
from tersify.contract import FallbackReason, Job, SessionId, Versioned, new_job_id

Message = dict[str, JsonValue]


class MessageShape(StrEnum):
    """Which API's message format a conversation uses."""

    OPENAI = "openai"
    ANTHROPIC = "anthropic"


class CompactionMethod(StrEnum):
    """How a compaction result was made."""

    LLM = "llm"
    FALLBACK = "fallback"
    PASSTHROUGH = "passthrough"  # the input handed back: see ``PassthroughReason``


class PassthroughReason(StrEnum):
    """Why a compaction handed the conversation back instead of compacting it."""

    TOO_FEW_MESSAGES = "too_few_messages"  # under TERSIFY_COMPACTION_MIN_MESSAGES
    NOTHING_TO_COMPACT = "nothing_to_compact"  # no middle between the protected head and tail
    NOT_SMALLER = "not_smaller"  # the compacted form would not be smaller than the input


class CompactionJob(Job):
    """A conversation whose middle should be replaced by one summary message."""

    job_id: str = Field(default_factory=new_job_id, min_length=8, max_length=64)
    session_id: SessionId
    messages: list[Message]
    previous_summary: str | None = None
    protect_first: int = Field(2, ge=0, le=10_000)
    protect_last: int = Field(6, ge=0, le=10_000)
    shape: MessageShape | None = None  # None: detected from the messages


class CompactionResult(Versioned):
    """The compacted conversation, in the input's shape, and how it was made."""

    job_id: str
    session_id: str
    messages: list[Message]
    summary: str
    method: CompactionMethod
    shape: MessageShape | None = None  # None: no message told the shapes apart
    provider: str | None = None
    model: str | None = None
    fallback_reason: FallbackReason | None = None
    fallback_detail: str | None = None
    passthrough_reason: PassthroughReason | None = None
    messages_before: int = Field(ge=0)
    messages_after: int = Field(ge=0)
    tokens_before: int = Field(ge=0)
    tokens_after: int = Field(ge=0)
    input_tokens: int | None = None
    output_tokens: int | None = None
    started_at: datetime
    finished_at: datetime
