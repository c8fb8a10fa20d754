"""Claude Code's project JSONL (``~/.claude/projects/PROJECT/SESSION.jsonl``), read for savings.

Each line is one event; ``user`` and ``assistant`` lines carry an Anthropic-shaped ``message``.
The blocks of one API response are logged as several ``assistant`` lines with the same
``message.id`` (one model call); tool results come back in ``user`` lines as ``tool_result``
blocks naming their ``tool_use_id``. Lines of a subagent (``isSidechain``) belong to its own
context; a ``/compact`` summary (``isCompactSummary``, or a ``compact_boundary`` system line)
drops what came before from the context. Every other line (progress, snapshots, summaries,
hooks) is not part of the conversation and is passed over.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tersify.chat.messages import parse
from tersify.errors import InvalidJobError
from tersify.worker.savings.transcript import Builder, Transcript
from tersify.worker.store.logfiles import Skip

AGENT = "claude-code"
_CONVERSATION = frozenset({"user", "assistant"})


def looks_like(entry: dict[str, Any]) -> bool:
    """Whether a parsed line is one of Claude Code's."""
    kinds = {"user", "assistant", "summary", "system", "progress", "file-history-snapshot"}
    return entry.get("type") in kinds and ("sessionId" in entry or "leafUuid" in entry)


def read(
    path: Path, lines: Iterable[tuple[int, dict[str, Any]]], skips: list[Skip]
) -> list[Transcript]:
    """The sessions of one file (the main thread and each subagent), from its parsed lines."""
    builders: dict[str, Builder] = {}
    calls: dict[str, tuple[str, str | None]] = {}  # tool_use id → (tool name, command)
    for number, entry in lines:
        if entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
            _builder(builders, path, entry).compacted()
            continue
        if entry.get("type") not in _CONVERSATION or entry.get("isMeta"):
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            skips.append(Skip(path, number, "a conversation line without a message"))
            continue
        builder = _builder(builders, path, entry)
        if entry.get("isCompactSummary"):
            builder.compacted()
            continue
        reason = _take(builder, message, entry, calls)
        if reason is not None:
            skips.append(Skip(path, number, reason))
    return [b.finish() for b in builders.values()]


def _builder(builders: dict[str, Builder], path: Path, entry: dict[str, Any]) -> Builder:
    session = str(entry.get("sessionId") or path.stem)
    if entry.get("isSidechain"):
        session += f"/agent-{entry.get('agentId') or 'sidechain'}"
    if session not in builders:
        builders[session] = Builder(session, AGENT, path)
    return builders[session]


def _take(
    builder: Builder,
    message: dict[str, Any],
    entry: dict[str, Any],
    calls: dict[str, tuple[str, str | None]],
) -> str | None:
    try:
        (turn,) = parse([message]).turns
    except InvalidJobError as exc:
        return str(exc)
    if message.get("role") == "assistant":
        model = message.get("model")
        if isinstance(model, str) and not model.startswith("<"):  # "<synthetic>": no call
            builder.model = model
            builder.call(str(message.get("id") or entry.get("uuid")))
        for call in turn.calls:
            calls[call.id] = (call.name, call.command)
        return None
    for result in turn.results:
        name, command = calls.get(result.call_id, ("unknown", None))
        builder.output(name, command, result.content)
    return None
