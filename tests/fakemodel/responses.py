"""The OpenAI Responses API (``POST /v1/responses``), unstreamed: enough for the official SDK."""

from __future__ import annotations

import time
from typing import Any

from tests.fakemodel.wire import DEFAULT_MODEL, OpenAIWire, flatten, tokens


class ResponsesWire(OpenAIWire):
    """Requests carry ``input`` (a string or items) instead of ``messages``; errors are OpenAI's."""

    def refusal(self, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        if not isinstance(body, dict):
            return 400, "request body must be a JSON object"
        if not isinstance(body.get("model"), str):
            return 400, "model: field required"
        if not isinstance(body.get("input"), str | list):
            return 400, "input: field required"
        return None

    def user_text(self, body: dict[str, Any]) -> str:
        source = body["input"]
        if isinstance(source, str):
            return source
        parts = [
            flatten(item.get("content"))
            for item in source
            if isinstance(item, dict) and item.get("role") == "user"
        ]
        return "\n".join(parts)

    def success(
        self, body: dict[str, Any], text: str, serial: int, *, shape: str = "text"
    ) -> dict[str, Any]:
        prompt_tokens = tokens(self.user_text(body))
        return {
            "id": f"resp_fake{serial:012d}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": body.get("model") or DEFAULT_MODEL,
            "output": [
                {
                    "type": "message",
                    "id": f"msg_fake{serial:012d}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": prompt_tokens,
                "output_tokens": tokens(text),
                "total_tokens": prompt_tokens + tokens(text),
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
