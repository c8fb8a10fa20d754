"""The MCP proxy: the intent and session of its jobs, how long it waits for a summary."""

from __future__ import annotations

from pydantic import BaseModel, Field


class McpSettings(BaseModel):
    """``TERSIFY_MCP_*``."""

    mcp_intent: str | None = Field(
        None, description="What the agent is after, for every proxied call; else its arguments."
    )
    mcp_session: str | None = Field(
        None, description="Session of the proxy's jobs; unset: a new one per proxy run."
    )
    mcp_wait_seconds: float = Field(
        60.0, gt=0, description="Longest wait for a summary before the full result goes back."
    )
