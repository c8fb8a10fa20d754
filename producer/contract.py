"""The job contract between producers and workers: versioned pydantic models, JSON only."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

SCHEMA_VERSION: Final = 1

SessionId = Annotated[
    str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:@/+=-]+$")
]
JOB_ID_PATTERN: Final = r"^[A-Za-z0-9_-]{8,64}$"
JobId = Annotated[str, StringConstraints(pattern=JOB_ID_PATTERN)]
"""A job id: 8–64 URL-safe characters (``new_job_id`` makes 32 hex digits)."""


class ToolType(StrEnum):
    """What kind of tool produced an output; chooses the prompt, the ratio and the extractor."""

    FILE_CONTENT = "FileContent"
    SEARCH_RESULTS = "SearchResults"
    DIRECTORY_LISTING = "DirectoryListing"
    COMMAND_OUTPUT = "CommandOutput"
    STRUCTURED_DATA = "StructuredData"
    WEB_CONTENT = "WebContent"


class Method(StrEnum):
    """How a result's text was made."""

    LLM = "llm"
    EXTRACTIVE = "extractive"
    FALLBACK = "fallback"
    PASSTHROUGH = "passthrough"
    CACHE = "cache"


class Queue(StrEnum):
    """Celery queues: interactive jobs gate a session, batch jobs never do."""

    INTERACTIVE = "interactive"
    BATCH = "batch"


class FallbackReason(StrEnum):
    """Why a job ended with the fallback truncation instead of a model summary."""

    TIMEOUT = "timeout"
    RATE_LIMITED = "rate_limited"
    SERVER_ERROR = "server_error"
    CLIENT_ERROR = "client_error"
    CONNECTION_ERROR = "connection_error"
    MALFORMED = "malformed"
    EMPTY = "empty"
    OVERSIZED = "oversized"
    DEADLINE = "deadline"
    LEASE_EXPIRED = "lease_expired"
    UNGROUNDED = "ungrounded"
    CIRCUIT_OPEN = "circuit_open"
    INTERNAL_ERROR = "internal_error"
    CANCELLED = "cancelled"


class DeadLetterReason(StrEnum):
    """Why a worker refused a queue entry: the dead-letter record's ``reason`` and metric label."""

    OVERSIZED = "oversized"  # the raw entry is over TERSIFY_MAX_QUEUE_ENTRY_BYTES (unparsed)
    NOT_JSON = "not_json"  # the raw entry is not JSON text
    BAD_ENVELOPE = "bad_envelope"  # not a complete kombu message (a field missing, null, mistyped)
    BAD_BODY = "bad_body"  # the body is not Celery's [args, kwargs, embed], or links tasks
    UNDECODABLE_BODY = "undecodable_body"  # Celery could not decode the body
    UNKNOWN_TASK = "unknown_task"  # no worker task has the message's name
    REJECTED = "rejected"  # Celery refused the message as invalid
    DELIVERY_FAILED = "delivery_failed"  # anything else raised between the queue and the task
    BAD_ARGUMENTS = "bad_arguments"  # the task was called with the wrong arguments
    INVALID_JOB = "invalid_job"  # the job message breaks the contract (schema, fields)
    PAYLOAD_MISSING = "payload_missing"  # the job's stored output expired before a worker took it
    TASK_FAILED = "task_failed"  # the task raised past its own handling (a bug, Redis lost)


def new_job_id() -> str:
    """An unguessable job id (128 random bits, URL-safe hex)."""
    return secrets.token_hex(16)


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


class LineRange(BaseModel):
    """A 1-based, inclusive range of lines."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: int = Field(ge=1)
    end: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end < self.start:
            raise ValueError("end must be >= start")
        return self


class JobOptions(BaseModel):
    """Per-job controls; each limit is checked against its ``TERSIFY_JOB_MAX_*`` ceiling."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    budget_chars: int | None = Field(None, ge=200, description="Extractive and fallback budget.")
    max_summary_chars: int | None = Field(None, ge=50, description="Longest model summary.")
    model: str | None = Field(
        None, min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:/@-]+$", description="Model."
    )
    summarize: bool = Field(True, description="false: hand the output back as it is, no job.")
    callback_url: str | None = Field(
        None, max_length=2000, description="POSTed the signed result once it is stored."
    )


class _Versioned(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = SCHEMA_VERSION

    @model_validator(mode="before")
    @classmethod
    def _known_version(cls, data: Any) -> Any:
        if isinstance(data, dict):
            version = data.get("schema_version", SCHEMA_VERSION)
            if version != SCHEMA_VERSION:
                raise ValueError(
                    f"unsupported schema_version {version!r}; this build speaks {SCHEMA_VERSION}"
                )
        return data


class PendingSummary(_Versioned):
    """A tool output waiting to be summarized: what a producer enqueues."""

    job_id: JobId = Field(default_factory=new_job_id)
    session_id: SessionId
    tool_call_id: str | None = Field(None, max_length=200)
    tool_name: str = Field(min_length=1, max_length=200)
    command: str | None = Field(None, max_length=100_000)
    output: str
    query: str | None = Field(None, max_length=10_000)
    relevant_lines: LineRange | None = None
    queue: Queue = Queue.INTERACTIVE
    decoded_with_replacement: bool = False
    created_at: datetime = Field(default_factory=utcnow)
    deadline: datetime
    output_ref: str | None = Field(None, pattern=r"^[0-9a-f]{32}$")
    options: JobOptions | None = None
    tenant: str | None = Field(None, max_length=64)  # the API token's tenant, when it has one

    @classmethod
    def build(cls, *, deadline_seconds: float, **fields: Any) -> Self:
        """Make a job whose deadline is ``deadline_seconds`` after its creation."""
        created = fields.pop("created_at", None) or utcnow()
        return cls(
            created_at=created, deadline=created + timedelta(seconds=deadline_seconds), **fields
        )


class SummaryResult(_Versioned):
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
