"""One internal form for OpenAI-style, Anthropic-style and metadata-style chat messages.

A ``Turn`` keeps the caller's dict untouched in ``raw``; the only edits compaction ever makes to
an existing message are removing tool calls or tool results, done on a copy of ``raw`` by
``Turn.keep`` so every other field (and the key spelling, ``"role"`` or ``":role"``) survives.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from tersify.chat.calls import ToolCall, ToolResult
from tersify.chat.compaction import MessageShape
from tersify.errors import InvalidJobError


class Role(StrEnum):
    """Who a turn is from."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


_ROLES = {"system": Role.SYSTEM, "developer": Role.SYSTEM, "user": Role.USER}
_ROLES |= {"assistant": Role.ASSISTANT, "tool": Role.TOOL}
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
_OPENAI_PARTS = frozenset({"image_url", "input_audio", "refusal"})


@dataclass(frozen=True, slots=True)
class Turn:
    """One message: role, its plain text, its tool calls and results, and the original dict."""

    role: Role
    text: str
    calls: tuple[ToolCall, ...] = ()
    results: tuple[ToolResult, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def keep(self, call_ids: set[str], result_ids: set[str]) -> Turn | None:
        """This turn with only the given calls and results; None when nothing would remain."""
        calls = tuple(c for c in self.calls if c.id in call_ids)
        results = tuple(r for r in self.results if r.call_id in result_ids)
        if calls == self.calls and results == self.results:
            return self
        if not (calls or results or self.text.strip()):
            return None
        raw = _filtered(self.raw, {c.id for c in calls}, {r.call_id for r in results})
        return replace(self, calls=calls, results=results, raw=raw)


@dataclass(frozen=True, slots=True)
class Conversation:
    """A conversation: its turns (each with its tool calls and results), its message shape, and
    what is needed to write new messages in its style."""

    turns: list[Turn]
    shape: MessageShape | None
    colon_keys: bool


def _key(name: str) -> str:
    return name[1:] if name.startswith(":") else name


def plain_keys(value: Any) -> Any:
    """``value`` with a leading colon removed from every dict key, at any depth."""
    if isinstance(value, Mapping):
        return {_key(str(k)): plain_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_keys(v) for v in value]
    return value


def _filtered(raw: Mapping[str, Any], call_ids: set[str], result_ids: set[str]) -> dict[str, Any]:
    """A copy of ``raw`` without the tool calls and results whose ids are not kept."""
    out: dict[str, Any] = copy.deepcopy(dict(raw))

    def prune_calls(holder: dict[str, Any]) -> None:
        for k in [k for k in holder if _key(k) == "tool_calls"]:
            holder[k] = [c for c in holder[k] if plain_keys(c).get("id") in call_ids]
            if not holder[k]:
                del holder[k]  # an empty tool_calls array is itself rejected by some APIs

    prune_calls(out)
    for k, value in out.items():
        if _key(k) == "metadata" and isinstance(value, dict):
            prune_calls(value)
        if _key(k) == "content" and isinstance(value, list):
            out[k] = [b for b in value if _block_kept(plain_keys(b), call_ids, result_ids)]
    return out


def _block_kept(block: Any, call_ids: set[str], result_ids: set[str]) -> bool:
    if not isinstance(block, dict):
        return True
    if block.get("type") == "tool_use":
        return block.get("id") in call_ids
    if block.get("type") == "tool_result":
        return block.get("tool_use_id") in result_ids
    return True


def _text_of(content: Any, where: str) -> str:
    """The plain text of a content value (a string, a list of blocks, or None)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(str(p) for p in parts)
    raise InvalidJobError(f"{where}: content must be a string, a list of blocks or null")


def _ident(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidJobError(f"{where}: a tool call or result without an id")
    return value


def _dicts(value: Any, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InvalidJobError(f"{where}: tool_calls must be a list of objects")
    return value


def _call(call_id: Any, name: Any, arguments: Any, where: str) -> ToolCall:
    return ToolCall.of(_ident(call_id, where), str(name or ""), arguments)


def _parse(raw: Mapping[str, Any], index: int) -> tuple[Turn, set[tuple[MessageShape, str]]]:
    where = f"message {index}"
    msg = plain_keys(raw)
    role = _ROLES.get(str(msg.get("role", "")))
    if role is None:
        raise InvalidJobError(f"{where}: unsupported role {msg.get('role')!r}")
    marks: set[tuple[MessageShape, str]] = set()
    content = msg.get("content")
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    for entry in _dicts(msg.get("tool_calls"), where):
        marks.add((MessageShape.OPENAI, "tool_calls"))
        fn = entry.get("function")
        fn = fn if isinstance(fn, dict) else {}
        calls.append(_call(entry.get("id"), fn.get("name"), fn.get("arguments"), where))
    metadata = msg.get("metadata")
    for entry in _dicts(metadata.get("tool_calls") if isinstance(metadata, dict) else None, where):
        marks.add((MessageShape.OPENAI, "metadata.tool_calls"))
        calls.append(_call(entry.get("id"), entry.get("name"), entry.get("arguments"), where))
    if role is Role.TOOL:
        marks.add((MessageShape.OPENAI, "role tool"))
        call_id = _ident(msg.get("tool_call_id"), where)
        results.append(ToolResult(call_id, _text_of(content, where)))
        content = None
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind in _ANTHROPIC_BLOCKS or (kind == "image" and "source" in block):
            marks.add((MessageShape.ANTHROPIC, f"{kind} block"))
        elif kind in _OPENAI_PARTS:
            marks.add((MessageShape.OPENAI, f"{kind} part"))
        if kind == "tool_use":
            calls.append(_call(block.get("id"), block.get("name"), block.get("input", {}), where))
        elif kind == "tool_result":
            call_id = _ident(block.get("tool_use_id"), where)
            body = _text_of(block.get("content"), where)
            results.append(ToolResult(call_id, body, bool(block.get("is_error"))))
    if calls and role is not Role.ASSISTANT:
        raise InvalidJobError(f"{where}: only assistant messages may call tools")
    if results and role not in (Role.USER, Role.TOOL):
        raise InvalidJobError(f"{where}: tool results belong in user or tool messages")
    turn = Turn(role, _text_of(content, where), tuple(calls), tuple(results), raw)
    return turn, marks


def parse(messages: Sequence[Mapping[str, Any]], shape: MessageShape | None = None) -> Conversation:
    """Parse a message list, detecting its shape; mixed shapes raise ``InvalidJobError``."""
    turns: list[Turn] = []
    seen: dict[MessageShape, str] = {}
    for index, raw in enumerate(messages):
        turn, marks = _parse(raw, index)
        turns.append(turn)
        for found, why in sorted(marks):
            seen.setdefault(found, f"message {index} has {why}")
    if len(seen) > 1:
        detail = "; ".join(f"{s.value}: {why}" for s, why in seen.items())
        raise InvalidJobError(f"mixed OpenAI and Anthropic message shapes ({detail})")
    detected = next(iter(seen), None)
    if shape is not None and detected is not None and detected is not shape:
        raise InvalidJobError(f"the job says {shape.value} messages but they are {detected.value}")
    colon = bool(messages) and all(":role" in m and "role" not in m for m in messages)
    return Conversation(turns, detected or shape, colon)


def _colonize(value: Any) -> Any:
    if isinstance(value, dict):
        return {f":{k}": _colonize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_colonize(v) for v in value]
    return value


def text_turn(role: Role, text: str, conversation: Conversation) -> Turn:
    """A new plain-text turn written the way the conversation writes its messages."""
    content: Any = text
    if conversation.shape is MessageShape.ANTHROPIC:
        content = [{"type": "text", "text": text}]
    raw: dict[str, Any] = {"role": role.value, "content": content}
    return Turn(role, text, raw=_colonize(raw) if conversation.colon_keys else raw)
