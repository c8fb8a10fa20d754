"""The three wire formats the gateway reads: where tool results, their calls and the query sit.

- Anthropic Messages: ``tool_result`` blocks in user messages, answering ``tool_use`` blocks;
- OpenAI Chat Completions: ``role: tool`` messages, answering an assistant's ``tool_calls``;
- OpenAI Responses: ``function_call_output`` (and ``custom_tool_call_output``) input items,
  answering ``function_call`` (``custom_tool_call``) items.

Each reader finds the tool results made only of text (no image, document or file parts; no
error), with the span of their content in the raw request and how to write a replacement in
the same shape: a string stays a string, a list of text parts becomes one text part that keeps
the last part's ``cache_control``. Everything else about the request is left to the client.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from tersify.chat.calls import ToolCall, item_call
from tersify.worker.gateway.spans import ANY_ITEM, Node, UnusualJSONError, dumps, locate

# Claude Code wraps context it adds to a user turn in these; they are not what the user asked.
_REMINDER: Final = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
QUERY_MAX_CHARS: Final = 10_000


class Api(StrEnum):
    """The wire format of a request."""

    ANTHROPIC = "anthropic"
    OPENAI_CHAT = "openai-chat"
    OPENAI_RESPONSES = "openai-responses"


@dataclass(frozen=True, slots=True)
class ResultSpan:
    """A text-only tool result: its text, where its content sits, how to write a replacement."""

    call_id: str | None
    text: str
    start: int
    end: int
    render: Callable[[str], str]
    call: ToolCall | None = None


@dataclass(slots=True)
class RequestView:
    """What the gateway reads of a request: its tool results (each with the call it answers,
    as the one conversation model's ``ToolCall``), the query and the opening turn."""

    api: Api
    model: str | None
    results: list[ResultSpan] = field(default_factory=list)
    query: str | None = None
    opening: str = ""


def read(api: Api, text: str) -> RequestView:
    """The conversation of a request body; ``UnusualJSONError`` when it is not one to edit."""
    readers = {
        Api.ANTHROPIC: _anthropic,
        Api.OPENAI_CHAT: _openai_chat,
        Api.OPENAI_RESPONSES: _openai_responses,
    }
    return readers[api](text)


def _root(text: str, *paths: tuple[str | int, ...]) -> Node:
    root = locate(text, paths)
    if root.members is None:
        raise UnusualJSONError("the request body is not a JSON object")
    return root


def _model(root: Node) -> str | None:
    model = root.leaf("model")
    return model if isinstance(model, str) else None


def _anthropic(text: str) -> RequestView:
    root = _root(text, ("messages", ANY_ITEM, "content", ANY_ITEM))
    found = RequestView(Api.ANTHROPIC, _model(root))
    messages = _items(root.get("messages"))
    calls: dict[str, ToolCall] = {}
    for message in messages:
        for block in _items(message.get("content")):
            kind = block.leaf("type")
            if kind == "tool_use" and isinstance(block.leaf("name"), str):
                call_id = str(block.leaf("id"))
                calls[call_id] = ToolCall.of(call_id, block.leaf("name"), block.leaf("input"))
            elif kind == "tool_result" and block.leaf("is_error") is not True:
                result = _text_result(block.get("content"), "text", block.leaf("tool_use_id"))
                _add(found, result)
        if message.leaf("role") == "user" and (asked := _said(message.get("content"), "text")):
            found.query = asked
    if messages:
        found.opening = _joined(messages[0].get("content"), "text")
    _attach(found, calls)
    return found


def _openai_chat(text: str) -> RequestView:
    root = _root(text, ("messages", ANY_ITEM))
    found = RequestView(Api.OPENAI_CHAT, _model(root))
    messages = _items(root.get("messages"))
    calls: dict[str, ToolCall] = {}
    for message in messages:
        role = message.leaf("role")
        if role == "assistant":
            for call in message.leaf("tool_calls") or ():
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("name"), str):
                    call_id, arguments = str(call.get("id")), function.get("arguments")
                    calls[call_id] = ToolCall.of(call_id, function["name"], arguments)
        elif role == "tool":
            result = _text_result(message.get("content"), "text", message.leaf("tool_call_id"))
            _add(found, result)
        elif role == "user" and (asked := _said(message.get("content"), "text")):
            found.query = asked
    first_user = next((m for m in messages if m.leaf("role") == "user"), None)
    found.opening = _joined(first_user.get("content") if first_user else None, "text")
    _attach(found, calls)
    return found


_OUTPUTS: Final = {"function_call_output", "custom_tool_call_output"}
_CALLS: Final = {"function_call", "custom_tool_call", "local_shell_call"}


def _openai_responses(text: str) -> RequestView:
    root = _root(text, ("input", ANY_ITEM))
    found = RequestView(Api.OPENAI_RESPONSES, _model(root))
    source = root.get("input")
    if source is not None and isinstance(source.value, str):
        found.query = found.opening = source.value[:QUERY_MAX_CHARS]
        return found
    calls: dict[str, ToolCall] = {}
    for item in _items(source):
        kind = item.leaf("type")
        if kind in _CALLS and (call := item_call(item.python())) is not None:
            calls[call.id] = call
        elif kind in _OUTPUTS:
            result = _text_result(item.get("output"), "input_text", item.leaf("call_id"))
            _add(found, result)
        elif item.leaf("role") == "user" and kind in (None, "message"):
            _asked(found, _said(item.get("content"), "input_text"))
    _attach(found, calls)
    return found


def _add(found: RequestView, result: ResultSpan | None) -> None:
    if result is not None:
        found.results.append(result)


def _asked(found: RequestView, asked: str | None) -> None:
    """A user turn's text: the query so far, and the opening if it is the first."""
    if asked:
        found.query = asked
        found.opening = found.opening or asked


def _items(node: Node | None) -> list[Node]:
    """The walked objects of an array node (anything else in it is skipped)."""
    if node is None or node.items is None:
        return []
    return [item for item in node.items if item.members is not None]


def _parts(node: Node | None) -> list[Any] | None:
    """A content value as a list of parts (a string is one text part); None for other values."""
    if node is None:
        return None
    value = node.python()
    if isinstance(value, str):
        return [value]
    return value if isinstance(value, list) else None


def _text_only(parts: list[Any], kind: str) -> list[str] | None:
    """The texts of ``parts`` when every one is text of ``kind`` (or a bare string), else None."""
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif (
            isinstance(part, dict)
            and part.get("type") == kind
            and isinstance(part.get("text"), str)
        ):
            texts.append(part["text"])
        else:
            return None
    return texts


def _text_result(node: Node | None, kind: str, call_id: Any) -> ResultSpan | None:
    """A tool result whose content is text only, with the writer of its replacement."""
    parts = _parts(node)
    texts = _text_only(parts, kind) if parts else None
    if node is None or parts is None or not texts:
        return None
    if isinstance(node.python(), str):
        render: Callable[[str], str] = dumps
    else:
        last = parts[-1]
        extra = {"cache_control": last["cache_control"]} if "cache_control" in last else {}

        def render(new: str) -> str:
            return dumps([{"type": kind, "text": new, **extra}])

    ident = call_id if isinstance(call_id, str) else None
    return ResultSpan(ident, "\n".join(texts), node.start, node.end, render)


def _joined(node: Node | None, kind: str) -> str:
    """The text parts of a content value joined (other parts skipped)."""
    parts = _parts(node) or []
    texts = [p if isinstance(p, str) else p.get("text") for p in parts if _is_text(p, kind)]
    return "\n".join(t for t in texts if isinstance(t, str))


def _is_text(part: Any, kind: str) -> bool:
    return isinstance(part, str) or (isinstance(part, dict) and part.get("type") == kind)


def _said(node: Node | None, kind: str) -> str | None:
    """What the user wrote in a message's content, context reminders removed; None if nothing."""
    said = _REMINDER.sub("", _joined(node, kind)).strip()
    return said[:QUERY_MAX_CHARS] or None


def _attach(found: RequestView, calls: dict[str, ToolCall]) -> None:
    """Give each result the call it answers, when the request still holds that call."""
    found.results = [
        ResultSpan(r.call_id, r.text, r.start, r.end, r.render, calls.get(r.call_id or ""))
        for r in found.results
    ]
