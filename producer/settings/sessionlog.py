"""The session log on disk: where, how large, how long; what else it keeps."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

SESSION_LOG_DEFAULT = "~/.local/state/tersify/sessions"
"""The session-log directory unless set: per user, under ``$XDG_STATE_HOME`` when that is set."""


class SessionLogSettings(BaseModel):
    """``TERSIFY_SESSION_LOG_*`` and the re-read lines kept beside a job."""

    session_log_dir: Path = Field(
        Path(SESSION_LOG_DEFAULT),
        description="Per-session JSONL logs: an absolute path (`~` expanded), the same for every "
        "command; unset: under `$XDG_STATE_HOME` when that is set.",
    )
    session_log_max_bytes: int = Field(
        64 * 1024 * 1024, ge=4096, description="A session log past this rotates to a numbered file."
    )
    session_log_retention_days: float = Field(
        30.0, ge=0, description="Session log files untouched this long are deleted; 0: kept."
    )
    session_log_pending_max_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="Passthrough outputs waiting in Redis for the session log; oldest go past it.",
    )
    keep_read_lines: bool = Field(
        False,
        description="Keep the lines agents read back beside the job in the session log "
        "(redacted as the log is), to turn into corpus cases.",
    )

    @field_validator("session_log_dir")
    @classmethod
    def _absolute_log_dir(cls, path: Path) -> Path:
        state = os.environ.get("XDG_STATE_HOME", "")  # noqa: TID251 - the settings read it
        if path == Path(SESSION_LOG_DEFAULT) and Path(state).is_absolute():
            return Path(state) / "tersify" / "sessions"
        path = path.expanduser()
        if not path.is_absolute():
            raise ValueError(
                "must be an absolute path (every command and worker must find the same files)"
            )
        return path
