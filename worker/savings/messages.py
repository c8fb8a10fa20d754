"""Plain OpenAI or Anthropic message lists, read for savings.

A JSON file holding the list, or an object with ``messages`` (a request body: its ``model`` is the
agent's model; ``session_id`` or ``id`` names the session), or a JSONL file with one message a
line. The messages are parsed by ``tersify.chat.messages`` (the compaction's own parser): tool
calls from ``tool_calls`` or ``tool_use`` blocks, results from ``role: tool`` messages or
``tool_result`` blocks. Each assistant message is one model call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tersify.chat.messages import Role, parse
from tersify.errors import InvalidJobError
from tersify.worker.savings.transcript import Builder, Transcript
from tersify.worker.store.logfiles import Skip

AGENT = "messages"


def looks_like(entry: dict[str, Any]) -> bool:
    """Whether a parsed JSONL line is one message."""
    return isinstance(entry.get("role"), str) and ("content" in entry or "tool_calls" in entry)


def read(path: Path, document: Any, skips: list[Skip]) -> list[Transcript]:
    """The one session of a message list (``document``: the list, or the object holding it)."""
    holder = document if isinstance(document, dict) else {}
    messages = holder.get("messages", document)
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        skips.append(Skip(path, 0, "not a list of message objects"))
        return []
    try:
        conversation = parse(messages)
    except InvalidJobError as exc:
        skips.append(Skip(path, 0, f"not an OpenAI or Anthropic message list ({exc})"))
        return []
    name = holder.get("session_id") or holder.get("id") or path.stem
    builder = Builder(str(name), AGENT, path)
    model = holder.get("model")
    builder.model = model if isinstance(model, str) else None
    calls: dict[str, tuple[str, str | None]] = {}
    for index, turn in enumerate(conversation.turns):
        if turn.role is Role.ASSISTANT:
            builder.call(str(index))
        for call in turn.calls:
            calls[call.id] = (call.name, call.command)
        for result in turn.results:
            tool_name, command = calls.get(result.call_id, ("unknown", None))
            builder.output(tool_name, command, result.content)
    return [builder.finish()]
