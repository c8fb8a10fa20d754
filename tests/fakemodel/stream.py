"""Streamed answers (``"stream": true``): a finished answer told as the API's SSE events.

Anthropic Messages: ``message_start``, per content block ``content_block_start`` / deltas
(``text_delta``, ``input_json_delta``) / ``content_block_stop``, then ``message_delta`` and
``message_stop``. OpenAI Chat Completions: ``chat.completion.chunk`` data lines (content and
``tool_calls`` deltas), a usage chunk when ``stream_options.include_usage`` asks, ``[DONE]``.
Text is cut into pieces of a few words so a client sees several deltas.
"""

from __future__ import annotations

import json
from typing import Any

_PIECE_CHARS = 24


def _pieces(text: str) -> list[str]:
    return [text[i : i + _PIECE_CHARS] for i in range(0, len(text), _PIECE_CHARS)] or [""]


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _data(data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    return f"data: {text}\n\n".encode()


def anthropic_events(message: dict[str, Any]) -> list[bytes]:
    """The SSE events of a finished Anthropic message."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events = [_event("message_start", {"type": "message_start", "message": start})]
    events.append(_event("ping", {"type": "ping"}))
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            opened = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _pieces(json.dumps(block["input"]))
            ]
        else:
            opened = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"])]
        events.append(
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opened},
            )
        )
        for delta in deltas:
            events.append(
                _event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    closing = {
        "type": "message_delta",
        "delta": stop,
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    events.append(_event("message_delta", closing))
    events.append(_event("message_stop", {"type": "message_stop"}))
    return events


def openai_events(completion: dict[str, Any], include_usage: bool) -> list[bytes]:
    """The SSE data lines of a finished OpenAI chat completion."""
    choice = completion["choices"][0]
    message = choice["message"]
    base = {key: completion[key] for key in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        entry = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _data({**base, "choices": [entry]})

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if message.get("content"):
        events += [chunk({"content": piece}) for piece in _pieces(message["content"])]
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        opened = {"index": index, "id": call["id"], "type": "function"}
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {**opened, "function": {"name": function["name"], "arguments": ""}}
                    ]
                }
            )
        )
        for piece in _pieces(function["arguments"]):
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    events.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        events.append(_data({**base, "choices": [], "usage": completion["usage"]}))
    events.append(_data("[DONE]"))
    return events
