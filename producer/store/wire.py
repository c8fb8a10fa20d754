"""The broker messages that carry a job: the job without its output, plus a payload reference.

A summary message is versioned apart from the job it carries. Version 2 carries the job typed
(``SummaryHeader``) and the producer's classification of its output (``tool_type``), so a
worker neither rebuilds the job from an untyped dict nor sniffs the output again. Version 3 has
the same fields; its job was stored the way this version stores jobs (a JSON record, the
payload with its owner, a progress mark and its hold in the session's hash). A worker reads
every version: version 1 (a job as a plain object, no tool type; what producers before version
2 publish, and what may still wait in a queue when workers are upgraded) is validated into the
same model and its output classified by the worker, and a job of version 1 or 2 is checked for
a result stored without a progress mark. Producers publish version 3 only: upgrade the workers
first (an older worker dead-letters a version it does not know).
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tersify.contract import SCHEMA_VERSION, PendingSummary, SummaryHeader, ToolType
from tersify.errors import InvalidJobError, UnsupportedSchemaError

SUMMARIZE_TASK = "tersify.summarize"
COMPACT_TASK = "tersify.compact"

MESSAGE_VERSION: Final = 3
"""The summary message version producers publish."""
READ_VERSIONS: Final = frozenset({1, 2, MESSAGE_VERSION})
"""The summary message versions a worker reads."""


class SummaryMessage(BaseModel):
    """What a producer publishes for one summary job (JSON, by task name)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1, 2, 3] = MESSAGE_VERSION
    job: SummaryHeader
    tool_type: ToolType | None = None  # the producer's classification; absent in version 1
    payload: str = Field(pattern=r"^[0-9a-f]{64}$")
    gate_token: int | None = None

    @classmethod
    def for_job(
        cls, job: PendingSummary, digest: str, gate_token: int | None, tool_type: ToolType
    ) -> SummaryMessage:
        """Build the message for ``job`` whose output is stored under ``digest``."""
        return cls(job=job.header(), tool_type=tool_type, payload=digest, gate_token=gate_token)


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
    """Validate a message taken off the queue (either version); raise a typed error saying what
    is wrong."""
    if not isinstance(raw, dict):
        raise InvalidJobError(f"message must be a JSON object, not {type(raw).__name__}")
    version = raw.get("schema_version")
    if version not in READ_VERSIONS or isinstance(version, bool):
        raise UnsupportedSchemaError(f"unsupported schema_version {version!r}")
    try:
        return SummaryMessage.model_validate(raw)
    except ValidationError as exc:
        raise InvalidJobError(_first_error(exc)) from None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in err["loc"]) or "message"
    return f"{where}: {err['msg']}"
