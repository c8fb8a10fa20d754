"""Request and response bodies that the ``producer`` contract does not already define.

Field names and constraints are the contract's own (``PendingSummary``, ``CompactionJob``), so a
request maps one to one onto ``Producer.submit`` / ``Producer.compact``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tersify.chat.compaction import Message, MessageShape
from tersify.contract import JobOptions, LineRange, Queue, SessionId


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SummaryRequest(_Body):
    """A tool output to summarize: ``Producer.submit``'s arguments."""

    session_id: SessionId
    tool_name: str = Field(min_length=1, max_length=200)
    output: str
    command: str | None = Field(None, max_length=100_000)
    query: str | None = Field(None, max_length=10_000)
    tool_call_id: str | None = Field(None, max_length=200)
    relevant_lines: LineRange | None = None
    queue: Queue = Queue.INTERACTIVE
    options: JobOptions | None = None


class CompactionRequest(_Body):
    """A conversation to compact: ``Producer.compact``'s arguments."""

    session_id: SessionId
    messages: list[Message]
    previous_summary: str | None = None
    protect_first: int = Field(2, ge=0, le=10_000)
    protect_last: int = Field(6, ge=0, le=10_000)


class JobAccepted(_Body):
    """A job that is queued or running: poll ``GET`` on its URL (with ``?wait=``) for the result."""

    job_id: str
    status: str = "pending"


class HeldInput(_Body):
    """User input that arrived while the session's gate was closed."""

    message: str = Field(max_length=1_000_000)


class HeldCount(_Body):
    """How much input the session now holds."""

    held_inputs: int = Field(ge=0)


class HeldMessages(_Body):
    """Held input handed back, oldest first ([] while the gate is closed)."""

    messages: list[str]


class Health(_Body):
    """``/healthz``: this process answers and reaches Redis."""

    status: str = "ok"


class RepairRequest(_Body):
    """A conversation whose broken tool pairs should be removed before it is sent."""

    messages: list[Message]
    shape: MessageShape | None = None  # None: detected from the messages


class Repaired(_Body):
    """The conversation with every call answered and every result answering a call."""

    messages: list[Message]
    removed: int = Field(ge=0, description="Messages removed whole (nothing valid was left).")
