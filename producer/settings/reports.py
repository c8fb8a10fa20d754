"""Reports: what `tersify eval --method model` may spend and keep, what `tersify savings`
prices the agents' own tokens at."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from tersify.settings.values import PriceSetting, written


class ReportSettings(BaseModel):
    """The model evaluation's cache and ceiling, the agents' model prices."""

    eval_cache_dir: Path = Field(
        Path(".tersify/eval-cache"),
        description="Model answers `tersify eval --method model` keeps per case, model and "
        "prompt version, so a rerun calls no model for them.",
    )
    eval_max_cost_usd: float = Field(
        1.0, ge=0, description="Most a `tersify eval --method model` run spends on model calls."
    )
    agent_model_prices: PriceSetting = Field(
        written(
            "claude-opus-4-6=5/25,claude-opus-4-5=5/25,claude-opus-4-1=15/75,claude-sonnet-4-5=3/15,"
            "claude-sonnet-4=3/15,claude-haiku-4-5=1/5,gpt-5=1.25/10,gpt-5-codex=1.25/10,"
            "gpt-5-mini=0.25/2,gpt-4.1=2/8,gpt-4.1-mini=0.4/1.6,gemini-2.5-pro=1.25/10,"
            "gemini-3-pro-preview=2/12"
        ),
        description="USD per million tokens in/out of the agents' own models, `model=in/out,...` "
        "(list prices; set your own): what `tersify savings` prices saved input tokens at.",
    )
