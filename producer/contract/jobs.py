"""A job as a producer enqueues it: ids, per-job options and the versioned ``PendingSummary``."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from tersify.contract.kinds import Queue

SCHEMA_VERSION: Final = 1

SessionId = Annotated[
    str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:@/+=-]+$")
]
JOB_ID_PATTERN: Final = r"^[A-Za-z0-9_-]{8,64}$"
JobId = Annotated[str, StringConstraints(pattern=JOB_ID_PATTERN)]
"""A job id: 8–64 URL-safe characters (``new_job_id`` makes 32 hex digits)."""


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
    model_read_max_chars: int | None = Field(
        None,
        ge=2000,
        description="Most of the output sent to models in all (at most "
        "TERSIFY_MODEL_READ_MAX_CHARS).",
    )
    rerun: bool = Field(
        True, description="false: summarize on its own, never as what changed since a run before."
    )
    callback_url: str | None = Field(
        None, max_length=2000, description="POSTed the signed result once it is stored."
    )


class OutputCut(BaseModel):
    """How an output past ``TERSIFY_MAX_OUTPUT_BYTES`` was cut before its job was queued.

    The job carries the output's first ``head_lines`` and last ``tail_lines`` lines, and the
    ``kept_between`` lines between them that matter (errors, warnings, verdicts, the query's
    words); the other ``lines_cut`` lines were left out. The first ``bytes_stored`` bytes of the
    whole output are kept for reads by ``output_ref``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    bytes_in: int = Field(ge=0, description="The whole output's size.")
    lines_in: int = Field(ge=0)
    bytes_kept: int = Field(ge=0, description="The excerpt the job carries.")
    head_lines: int = Field(ge=0)
    tail_lines: int = Field(ge=0)
    kept_between: int = Field(ge=0, description="Lines that matter, kept from the cut part.")
    lines_cut: int = Field(ge=0)
    bytes_stored: int = Field(ge=0, description="How much of the whole output output_ref reads.")

    def notice(self) -> str:
        """One line that says what was cut, for the top of a summary."""
        stored = (
            "the whole output is readable by its output_ref"
            if self.bytes_stored >= self.bytes_in
            else f"its first {self.bytes_stored:,} bytes are readable by its output_ref"
        )
        return (
            f"[tersify: the output was {self.bytes_in:,} bytes in {self.lines_in:,} lines, over "
            f"TERSIFY_MAX_OUTPUT_BYTES; summarized: its first {self.head_lines:,} lines, its "
            f"last {self.tail_lines:,} and {self.kept_between:,} lines that matter of the "
            f"{self.kept_between + self.lines_cut:,} between; {stored}]"
        )


class Versioned(BaseModel):
    """The base of every job and result: frozen, no unknown fields, a known schema version."""

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


class Job(Versioned):
    """A job of any kind: made at ``created_at``, due by ``deadline``."""

    created_at: datetime = Field(default_factory=utcnow)
    deadline: datetime

    @classmethod
    def build(cls, *, deadline_seconds: float, **fields: Any) -> Self:
        """Make a job whose deadline is ``deadline_seconds`` after its creation."""
        created = fields.pop("created_at", None) or utcnow()
        return cls(
            created_at=created, deadline=created + timedelta(seconds=deadline_seconds), **fields
        )


class SummaryHeader(Job):
    """A summary job without its output: what the broker message carries (the output travels
    by claim check) and what a worker joins with the stored output (``with_output``)."""

    job_id: JobId = Field(default_factory=new_job_id)
    session_id: SessionId
    tool_call_id: str | None = Field(None, max_length=200)
    tool_name: str = Field(min_length=1, max_length=200)
    command: str | None = Field(None, max_length=100_000)
    query: str | None = Field(None, max_length=10_000)
    relevant_lines: LineRange | None = None
    queue: Queue = Queue.INTERACTIVE
    decoded_with_replacement: bool = False
    output_ref: str | None = Field(None, pattern=r"^[0-9a-f]{32}$")
    options: JobOptions | None = None
    tenant: str | None = Field(None, max_length=64)  # the API token's tenant, when it has one
    cut: OutputCut | None = None  # set when the output was past TERSIFY_MAX_OUTPUT_BYTES

    def with_output(self, output: str) -> PendingSummary:
        """The whole job: this header joined with its ``output`` text."""
        # its fields are models and values already checked: validating them again is cheap
        return PendingSummary.model_validate({**self.__dict__, "output": output})


class PendingSummary(SummaryHeader):
    """A tool output waiting to be summarized: what a producer enqueues."""

    output: str

    def header(self) -> SummaryHeader:
        """The job without its output, as the broker message carries it."""
        fields = self.__dict__.copy()
        del fields["output"]
        return SummaryHeader.model_validate(fields)
