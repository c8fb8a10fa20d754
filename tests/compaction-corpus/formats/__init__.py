"""Converters from each agent's own session format to the message list a ``CompactionJob`` takes.

Each converter takes the bytes of one public session file and returns its messages in order;
a marker message ``{"role": "compact-summary", "content": TEXT}`` stands where the agent's own
compaction summary was (a window may end there). Converters only regroup: text, arguments and
outputs are copied as they are; what is left out is named in each module's docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from formats import (
    aider,
    claude_code,
    cline,
    codex,
    copilot_cli,
    crush,
    gemini,
    kimi,
    mini_swe_agent,
    opencode,
    openhands,
    pi,
    specstory,
    swe_agent,
)

Message = dict[str, Any]
Converter = Callable[[bytes], list[Message]]

FORMATS: dict[str, Converter] = {
    "claude-code-jsonl": claude_code.convert,
    "mini-swe-agent-traj": mini_swe_agent.convert,
    "codex-rollout-jsonl": codex.convert,
    "opencode-export-json": opencode.convert,
    "copilot-cli-events-jsonl": copilot_cli.convert,
    "swe-agent-traj": swe_agent.convert,
    "openhands-events-json": openhands.convert,
    "aider-chat-history-md": aider.convert,
    "gemini-contents-json": gemini.convert,
    "crush-sqlite": crush.convert,
    "specstory-md": specstory.convert,
    "cline-ui-messages-json": cline.convert,
    "pi-session-jsonl": pi.convert,
    "kimi-context-jsonl": kimi.convert,
}
