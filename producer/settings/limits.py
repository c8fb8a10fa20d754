"""Limits: when an output is summarized, how long a summary may be, how much is kept."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, Field, SecretStr, model_validator

RENAMED = {"max_model_input_chars": "model_window_chars"}
"""Old setting names still read (``TERSIFY_<OLD>``), each with the field it now sets."""


class LimitsSettings(BaseModel):
    """Thresholds, budgets and caps, in characters and bytes, and a job's own ceilings."""

    summarize_threshold_chars: int = Field(
        1500, ge=0, description="Outputs at or under pass through."
    )
    max_summary_chars: int = Field(800, ge=50, description="Longest model summary accepted.")
    local_budget_chars: int = Field(2000, ge=200, description="Budget of extractive and fallback.")
    model_window_chars: int = Field(
        50_000,
        ge=2000,
        description="Most of an output one model request reads, line numbers counted; a longer "
        "one is read in windows side by side (was TERSIFY_MAX_MODEL_INPUT_CHARS, still read).",
    )
    model_read_max_chars: int = Field(
        400_000,
        ge=2000,
        description="Most of an output a job sends to models in all its windows; past it the "
        "densest windows are read and the summary names the lines no model read.",
    )
    max_verbatim_chars: int = Field(
        6000, ge=200, description="A file's relevant range kept verbatim in a model summary."
    )
    max_quote_chars: int = Field(
        1200,
        ge=0,
        description="Output lines a model summary quotes by number, copied exactly, besides its "
        "prose; 0: none.",
    )
    max_output_bytes: int = Field(
        16 * 1024 * 1024,
        ge=1024,
        description="Largest output summarized whole; past it the head, the tail and the lines "
        "that matter are (the cut is stated).",
    )
    max_stored_output_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="How much of an output past TERSIFY_MAX_OUTPUT_BYTES is kept for "
        "`output_ref` reads; the rest is dropped (and said so).",
    )
    max_queue_entry_bytes: int = Field(
        4 * 1024 * 1024,
        ge=64 * 1024,
        description="Queue entries over this are dead-lettered unparsed (a job is 1–2 KB).",
    )
    job_max_budget_chars: int = Field(
        20_000, ge=200, description="Ceiling on a job's budget_chars (extractive and fallback)."
    )
    job_max_summary_chars: int = Field(
        4000, ge=50, description="Ceiling on a job's max_summary_chars."
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, values: Any) -> Any:
        """A setting under its old name is read as its new one, unless the new one is set."""
        if not isinstance(values, dict):
            return values
        for old, new in RENAMED.items():
            if old in values:
                value = values.pop(old)
                if isinstance(value, SecretStr):  # kept sealed as an unclaimed name
                    value = value.get_secret_value()
                values.setdefault(new, value)
        return values

    @model_validator(mode="after")
    def _stored_cap_holds_the_cap(self) -> Self:
        if self.max_stored_output_bytes < self.max_output_bytes:
            raise ValueError(
                f"TERSIFY_MAX_STORED_OUTPUT_BYTES ({self.max_stored_output_bytes}) must be at "
                f"least TERSIFY_MAX_OUTPUT_BYTES ({self.max_output_bytes})"
            )
        return self
