"""The session gate: leases, sweeps, what a closed gate holds."""

from __future__ import annotations

from pydantic import BaseModel, Field


class GateSettings(BaseModel):
    """``TERSIFY_GATE_*``."""

    gate_lease_seconds: float = Field(
        15.0, gt=0, description="A job's hold, renewed by its worker."
    )
    gate_max_seconds: float = Field(60.0, gt=0, description="Absolute cap on one job's hold.")
    gate_sweep_interval_seconds: float = Field(2.0, gt=0, description="Expired-lease sweep period.")
    gate_fail_open: bool = Field(True, description="Gate reads as open when Redis is down.")
    gate_max_held_inputs: int = Field(
        100, ge=1, description="Held inputs one session may have waiting (past it: 429)."
    )
    gate_max_held_bytes: int = Field(
        4 * 1024 * 1024, ge=1024, description="Total bytes of one session's held input."
    )
