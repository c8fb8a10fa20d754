"""Codex CLI's rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl``), read for savings.

Each line is ``{"timestamp", "type", "payload"}``: ``session_meta`` names the session,
``turn_context`` the model, ``response_item`` the items the model API saw (messages, reasoning,
``function_call`` / ``custom_tool_call`` / ``local_shell_call`` and their ``…_output``, matched
by ``call_id``), ``compacted`` a compaction; ``event_msg`` lines repeat what the items hold and
are passed over. Older rollouts start with the session's meta object as the first line and
write the items bare, one a line. A model call is a run of items from the model (its reasoning,
message and calls) between items from anyone else.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tersify.chat.calls import item_call
from tersify.worker.savings.transcript import Builder, Transcript
from tersify.worker.store.logfiles import Skip

AGENT = "codex"
_WRAPPED = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_FROM_MODEL = _CALLS | {"reasoning", "web_search_call"}
_ITEMS = _FROM_MODEL | _OUTPUTS | {"message"}


def looks_like(entry: dict[str, Any]) -> bool:
    """Whether a parsed line is a rollout line (either generation)."""
    kind = entry.get("type")
    if kind in _WRAPPED:
        return isinstance(entry.get("payload"), dict)
    return kind in _ITEMS or ("id" in entry and "instructions" in entry and "timestamp" in entry)


class _Session:
    """One rollout being read: its builder, its open calls, who spoke last."""

    def __init__(self, path: Path) -> None:
        self.builder = Builder(path.stem, AGENT, path)
        self.calls: dict[str, tuple[str, str | None]] = {}
        self.model_spoke_last = False
        self.serial = 0

    def item(self, item: dict[str, Any]) -> str | None:
        """Take one response item; why it cannot be used, if it cannot."""
        kind = item.get("type")
        from_model = kind in _FROM_MODEL or (kind == "message" and item.get("role") == "assistant")
        if from_model and not self.model_spoke_last:
            self.serial += 1
            self.builder.call(str(self.serial))
        self.model_spoke_last = from_model
        if kind in _CALLS:
            call = item_call(item)
            if call is None:
                return f"a {kind} without a call_id"
            self.calls[call.id] = (call.name or "unknown", call.command)
        elif kind in _OUTPUTS:
            call_id = item.get("call_id")
            name, command = self.calls.get(str(call_id), ("unknown", None))
            self.builder.output(name, command, output_text(item.get("output")))
        return None


def read(
    path: Path, lines: Iterable[tuple[int, dict[str, Any]]], skips: list[Skip]
) -> list[Transcript]:
    """The one session of a rollout file, from its parsed lines."""
    session = _Session(path)
    for number, entry in lines:
        kind, payload = entry.get("type"), entry.get("payload")
        if kind not in _WRAPPED:  # an older rollout: the meta line, then bare items
            kind, payload = ("response_item", entry) if kind in _ITEMS else ("session_meta", entry)
        if not isinstance(payload, dict):
            skips.append(Skip(path, number, f"a {kind} line without a payload"))
            continue
        if kind == "session_meta" and isinstance(payload.get("id"), str):
            session.builder.session = payload["id"]
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            session.builder.model = payload["model"]
        elif kind == "compacted":
            session.builder.compacted()
        elif kind == "response_item":
            reason = session.item(payload)
            if reason is not None:
                skips.append(Skip(path, number, reason))
    return [session.builder.finish()]


def output_text(output: Any) -> str:
    """The text the model saw of a call's output: a string, the ``output`` of a JSON-encoded
    ``{"output", "metadata"}`` (older shell calls), or the text of a list of content items."""
    if isinstance(output, str):
        try:
            decoded = json.loads(output)
        except ValueError:
            return output
        if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
            return str(decoded["output"])
        return output
    if isinstance(output, list):
        texts = [i.get("text") for i in output if isinstance(i, dict)]
        return "\n".join(t for t in texts if isinstance(t, str))
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return str(output["content"])
    return ""
