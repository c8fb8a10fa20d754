"""The broker message that carries a job: the job without its output, plus a payload reference."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tersify.contract import SCHEMA_VERSION, PendingSummary
from tersify.errors import InvalidJobError, UnsupportedSchemaError

SUMMARIZE_TASK = "tersify.summarize"
COMPACT_TASK = "tersify.compact"


class SummaryMessage(BaseModel):
    """What a producer publishes for one summary job (JSON, by task name)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    job: dict[str, Any]
    payload: str = Field(pattern=r"^[0-9a-f]{64}$")
    gate_token: int | None = None

    @classmethod
    def for_job(cls, job: PendingSummary, digest: str, gate_token: int | None) -> SummaryMessage:
        """Build the message for ``job`` whose output is stored under ``digest``."""
        header = job.model_dump(mode="json", exclude={"output"})
        return cls(job=header, payload=digest, gate_token=gate_token)


class CompactionMessage(BaseModel):
    """What a producer publishes for one compaction job: the job is stored by claim check."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    job_id: str = Field(min_length=8, max_length=64)
    payload: str = Field(pattern=r"^[0-9a-f]{64}$")


def parse_compaction_message(raw: object) -> CompactionMessage:
    """Validate a compaction message taken off the queue."""
    if not isinstance(raw, dict):
        raise InvalidJobError(f"message must be a JSON object, not {type(raw).__name__}")
    if raw.get("schema_version") != SCHEMA_VERSION:
        raise UnsupportedSchemaError(f"unsupported schema_version {raw.get('schema_version')!r}")
    try:
        return CompactionMessage.model_validate(raw)
    except ValidationError as exc:
        raise InvalidJobError(_first_error(exc)) from None


def parse_message(raw: object) -> SummaryMessage:
    """Validate a message taken off the queue; raise a typed error saying what is wrong."""
    if not isinstance(raw, dict):
        raise InvalidJobError(f"message must be a JSON object, not {type(raw).__name__}")
    version = raw.get("schema_version")
    if version != SCHEMA_VERSION:
        raise UnsupportedSchemaError(f"unsupported schema_version {version!r}")
    try:
        return SummaryMessage.model_validate(raw)
    except ValidationError as exc:
        raise InvalidJobError(_first_error(exc)) from None


def rebuild_job(message: SummaryMessage, output: str) -> PendingSummary:
    """Join a message's job header with its output into the full ``PendingSummary``."""
    try:
        return PendingSummary.model_validate({**message.job, "output": output})
    except ValidationError as exc:
        raise InvalidJobError(_first_error(exc)) from None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in err["loc"]) or "message"
    return f"{where}: {err['msg']}"
