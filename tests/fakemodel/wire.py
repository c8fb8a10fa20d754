"""The two wire formats the fake speaks: Anthropic Messages and OpenAI Chat Completions."""

from __future__ import annotations

import itertools
import json
import re
import time
from typing import Any

from tests.fakemodel.behaviours import (
    Behaviour,
    Empty,
    Ok,
    Oversized,
    Quoting,
    Structured,
    Verbatim,
)
from tests.fakemodel.formats import (
    anthropic_tools_problem,
    anthropic_turns_problem,
    forced_tool,
    openai_format,
    openai_format_problem,
    structured_value,
)

SUMMARY_PREFIX = "Summary: "
DEFAULT_MODEL = "fake-model"
_EXCERPT_CHARS = 200
# the summarizer's fenced block (<tool_output_NONCE>) or a plain <output> one
_TOOL_OUTPUT = re.compile(r"<((?:tool_)?output(?:_[0-9a-f]+)?)\b[^>]*>(.*?)(?:</\1>|\Z)", re.DOTALL)
# a numbered line's label (``12|`` or a hashline's ``12#a1|``): the default answer reads past it
_NUMBERED = re.compile(r"^(\d+)(?:#[0-9a-f]{2})?\|(.*)$", re.MULTILINE)
_LINE_LABEL = re.compile(r"^\d+(?:#[0-9a-f]{2})?\|", re.MULTILINE)
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_OPENAI_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "unknown_url"),
    429: ("requests", "rate_limit_exceeded"),
}


class Wire:
    """One API's request validation and response shapes."""

    def refusal(self, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        """The status and message the real API would refuse this request with, if any."""
        if not isinstance(body, dict):
            return 400, "request body must be a JSON object"
        if not isinstance(body.get("model"), str):
            return 400, "model: field required"
        if not isinstance(body.get("messages"), list):
            return 400, "messages: field required"
        return None

    def user_text(self, body: dict[str, Any]) -> str:
        parts: list[str] = []
        for message in body["messages"]:
            if isinstance(message, dict) and message.get("role") == "user":
                parts.append(flatten(message.get("content")))
        return "\n".join(parts)

    def id_header(self, ids: itertools.count[int]) -> dict[str, str]:
        raise NotImplementedError

    def error(self, code: int, message: str | None) -> dict[str, Any]:
        raise NotImplementedError

    def success(
        self, body: dict[str, Any], text: str, serial: int, *, shape: str = "text"
    ) -> dict[str, Any]:
        """The 200 body answering ``body`` with ``text``; ``shape`` says how to read ``text``
        when the request asks for a structured answer: ``text`` (a JSON object as it is, any
        other text as the schema's first string), ``data`` (JSON, as it is) or ``verbatim``
        (the model's plain text, the format ignored)."""
        raise NotImplementedError


class AnthropicWire(Wire):
    def refusal(self, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        # Older SDKs authenticate with x-api-key, newer ones with a bearer token; accept both.
        if "x-api-key" not in headers and "authorization" not in headers:
            return 401, "x-api-key header is required"
        if "anthropic-version" not in headers:
            return 400, "anthropic-version: header is required"
        problem = super().refusal(headers, body)
        if problem is None and not isinstance(body.get("max_tokens"), int):
            return 400, "max_tokens: field required"
        if problem is None:
            found = anthropic_tools_problem(body) or anthropic_turns_problem(body["messages"])
            return (400, found) if found else None
        return problem

    def id_header(self, ids: itertools.count[int]) -> dict[str, str]:
        return {"request-id": f"req_fake{next(ids):012d}"}

    def error(self, code: int, message: str | None) -> dict[str, Any]:
        kind = _ANTHROPIC_ERRORS.get(code, "api_error")
        text = message or f"fake {kind.replace('_', ' ')} (HTTP {code})"
        return {"type": "error", "error": {"type": kind, "message": text}}

    def success(
        self, body: dict[str, Any], text: str, serial: int, *, shape: str = "text"
    ) -> dict[str, Any]:
        prompt = flatten(body.get("system")) + self.user_text(body)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        stop, said = "end_turn", text
        tool = forced_tool(body)
        if tool is not None and shape != "verbatim":
            data = structured_value(text, tool.get("input_schema"), given=shape == "data")
            if isinstance(data, dict):  # a tool call's input is always an object
                call_id = f"toolu_fake{serial:012d}"
                content = [{"type": "tool_use", "id": call_id, "name": tool["name"], "input": data}]
                stop, said = "tool_use", json.dumps(data)
        return {
            "id": f"msg_fake{serial:012d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or DEFAULT_MODEL,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": tokens(prompt), "output_tokens": tokens(said)},
        }


class OpenAIWire(Wire):
    def refusal(self, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        problem = super().refusal(headers, body)
        if problem is None:
            found = openai_format_problem(body)
            return (400, found) if found else None
        return problem

    def id_header(self, ids: itertools.count[int]) -> dict[str, str]:
        return {"x-request-id": f"req_fake{next(ids):012d}"}

    def error(self, code: int, message: str | None) -> dict[str, Any]:
        kind, err_code = _OPENAI_ERRORS.get(code, ("server_error", None))
        return {
            "error": {
                "message": message or f"fake {kind.replace('_', ' ')} (HTTP {code})",
                "type": kind,
                "param": None,
                "code": err_code,
            }
        }

    def success(
        self, body: dict[str, Any], text: str, serial: int, *, shape: str = "text"
    ) -> dict[str, Any]:
        prompt_tokens = sum(tokens(flatten(m.get("content"))) for m in body["messages"])
        asked, schema = openai_format(body)
        if asked and shape != "verbatim":
            text = json.dumps(structured_value(text, schema, given=shape == "data"))
        completion_tokens = tokens(text)
        return {
            "id": f"chatcmpl-fake{serial:012d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or DEFAULT_MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def default_summary(user_text: str) -> str:
    """The fake's default answer for a user message (read through its line numbers)."""
    found = _TOOL_OUTPUT.search(user_text)
    source = found.group(2) if found else user_text
    return SUMMARY_PREFIX + _LINE_LABEL.sub("", source.strip())[:_EXCERPT_CHARS]


def quoting_answer(behaviour: Quoting, user_text: str) -> str:
    """The JSON answer of a ``Quoting`` behaviour to ``user_text``."""
    pattern = re.compile(behaviour.pattern)
    numbers = [
        int(found.group(1))
        for found in _NUMBERED.finditer(user_text)
        if pattern.search(found.group(2))
    ]
    ranges: list[list[int]] = []
    for number in sorted(set(numbers)):
        if ranges and ranges[-1][1] == number - 1:
            ranges[-1][1] = number
        else:
            ranges.append([number, number])
    quotes = [f"{a}-{b}" if a != b else str(a) for a, b in ranges[:16]]
    data: dict[str, Any] = dict.fromkeys(behaviour.fields, behaviour.prose)
    data["quotes"] = quotes
    return json.dumps(data)


def answer_text(behaviour: Behaviour, user_text: str) -> str:
    if isinstance(behaviour, Quoting):
        return quoting_answer(behaviour, user_text)
    if isinstance(behaviour, Structured):
        return json.dumps(behaviour.data)
    if isinstance(behaviour, Verbatim):
        return behaviour.text
    if isinstance(behaviour, Empty):
        return ""
    if isinstance(behaviour, Ok) and behaviour.text is not None:
        return behaviour.text
    if isinstance(behaviour, Oversized):
        unit = default_summary(user_text) + " "
        return (unit * (behaviour.chars // len(unit) + 1))[: behaviour.chars]
    return default_summary(user_text)


def flatten(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content if isinstance(block, dict))
    return ""


def tokens(text: str) -> int:
    return (len(text) + 3) // 4


def models_list() -> dict[str, Any]:
    # One object that satisfies both SDKs' list-models shapes.
    model = {
        "id": DEFAULT_MODEL,
        "object": "model",
        "created": 0,
        "owned_by": "tersify",
        "type": "model",
        "display_name": "Fake Model",
        "created_at": "2025-01-01T00:00:00Z",
    }
    return {
        "object": "list",
        "data": [model],
        "has_more": False,
        "first_id": DEFAULT_MODEL,
        "last_id": DEFAULT_MODEL,
    }
