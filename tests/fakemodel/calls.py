"""Scripted tool calls (``tool_call``) in each wire format's answer shape."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.fakemodel.behaviours import ToolCall
from tests.fakemodel.responses import ResponsesWire
from tests.fakemodel.wire import DEFAULT_MODEL, AnthropicWire, OpenAIWire, Wire, tokens


def call_id(wire: Wire, serial: int) -> str:
    """The id the fake gives its ``serial``-th tool call, in the API's own style."""
    prefix = {AnthropicWire: "toolu_fake", OpenAIWire: "call_fake", ResponsesWire: "call_fake"}
    return f"{prefix.get(type(wire), 'call_fake')}{serial:012d}"


def tool_payload(wire: Wire, body: dict[str, Any], call: ToolCall, serial: int) -> dict[str, Any]:
    """The full (non-streamed) answer that calls ``call.name`` with ``call.input``."""
    ident = call_id(wire, serial)
    arguments = json.dumps(call.input)
    model = body.get("model") or DEFAULT_MODEL
    if isinstance(wire, AnthropicWire):
        content: list[dict[str, Any]] = [{"type": "text", "text": call.text}] if call.text else []
        content.append({"type": "tool_use", "id": ident, "name": call.name, "input": call.input})
        payload = wire.success(body, call.text or "", serial)
        return {**payload, "content": content, "stop_reason": "tool_use"}
    if isinstance(wire, ResponsesWire):
        payload = wire.success(body, call.text or "", serial)
        item = {
            "type": "function_call",
            "id": f"fc_fake{serial:012d}",
            "call_id": ident,
            "name": call.name,
            "arguments": arguments,
            "status": "completed",
        }
        return {**payload, "output": [*payload["output"][: 1 if call.text else 0], item]}
    return {
        "id": f"chatcmpl-fake{serial:012d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": call.text,
                    "refusal": None,
                    "tool_calls": [
                        {
                            "id": ident,
                            "type": "function",
                            "function": {"name": call.name, "arguments": arguments},
                        }
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": tokens(arguments),
            "total_tokens": 10 + tokens(arguments),
        },
    }
