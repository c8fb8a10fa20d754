"""The Anthropic Messages API (``POST {base_url}/v1/messages``).

A request with an ``AnswerFormat`` offers one tool whose input schema is the format and forces
it (``tool_choice: {"type": "tool"}``): the answer is that tool call's input object. A
correction replays the refused call and answers it with an ``is_error`` tool result.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import Field, SecretStr

from tersify.worker.model.providers.base import (
    AnswerFormat,
    Completion,
    Correction,
    ModelRequest,
)
from tersify.worker.model.providers.http import malformed, optional_int
from tersify.worker.model.providers.remote import HttpProvider, HttpSettings

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicSettings(HttpSettings):
    """``TERSIFY_ANTHROPIC_*``."""

    api_key: SecretStr | None = Field(None, description="Enables Anthropic.")
    base_url: str = Field("https://api.anthropic.com", description="Without /v1.")
    model: str = Field("claude-haiku-4-5-20251001", description="Anthropic model.")


class AnthropicProvider(HttpProvider):
    """Claude over the Messages API; ``base_url`` follows the SDK convention (no ``/v1``)."""

    name = "anthropic"
    settings_type: ClassVar[type[HttpSettings]] = AnthropicSettings
    path: ClassVar[str] = "/v1/messages"

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [{"role": "user", "content": request.user}]
        if request.correction is not None:
            messages.extend(_corrected(request.correction, request.answer_format))
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": messages,
        }
        answer = request.answer_format
        if answer is not None:
            body["tools"] = [
                {
                    "name": answer.name,
                    "description": answer.description,
                    "input_schema": dict(answer.schema),
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": answer.name}
        return body

    def _api_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self._api_key is not None:
            headers["x-api-key"] = self._api_key.get_secret_value()
        return headers

    def _parse(self, data: dict[str, Any]) -> Completion:
        content = data.get("content")
        if not isinstance(content, list):
            raise malformed("Messages response has no content list")
        texts: list[str] = []
        call: dict[str, Any] | None = None
        for block in content:
            if not isinstance(block, dict):
                raise malformed("Messages response content block is not an object")
            if block.get("type") == "text":
                text = block.get("text")
                if not isinstance(text, str):
                    raise malformed("Messages response text block has no text")
                texts.append(text)
            elif block.get("type") == "tool_use" and call is None:
                call = block
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        model = data.get("model")
        answer, call_id = _tool_input(call)
        return Completion(
            text="".join(texts),
            model=model if isinstance(model, str) and model else self.model,
            input_tokens=optional_int(usage.get("input_tokens")),
            output_tokens=optional_int(usage.get("output_tokens")),
            data=answer,
            call_id=call_id,
        )


def _tool_input(call: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str | None]:
    """A tool call's input object and id (None, None when the answer made no call)."""
    if call is None:
        return None, None
    answer, call_id = call.get("input"), call.get("id")
    if not isinstance(answer, dict) or not isinstance(call_id, str) or not call_id:
        raise malformed("Messages response tool_use block has no input object or id")
    return answer, call_id


def _corrected(correction: Correction, form: AnswerFormat | None) -> list[dict[str, Any]]:
    """The refused answer as the assistant's turn, then the refusal as the user's."""
    answer = correction.answer
    if form is not None and answer.call_id is not None and answer.data is not None:
        call = {"type": "tool_use", "id": answer.call_id, "name": form.name, "input": answer.data}
        return [
            {"role": "assistant", "content": [call]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": answer.call_id,
                        "is_error": True,
                        "content": correction.error,
                    }
                ],
            },
        ]
    # An answer given as text (or by another provider) is replayed as text.
    said = answer.text.strip() or (json.dumps(answer.data) if answer.data is not None else "")
    return [
        {"role": "assistant", "content": said or "(no answer)"},
        {"role": "user", "content": correction.error},
    ]
