"""The Anthropic Messages API (``POST {base_url}/v1/messages``)."""

from __future__ import annotations

from typing import Any

from tersify.worker.model.providers.base import Completion, ModelRequest
from tersify.worker.model.providers.http import HttpProvider, malformed, optional_int

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicProvider(HttpProvider):
    """Claude over the Messages API; ``base_url`` follows the SDK convention (no ``/v1``)."""

    path = "/v1/messages"
    name = "anthropic"

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        return {
            "model": request.model or self.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.user}],
        }

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
        for block in content:
            if not isinstance(block, dict):
                raise malformed("Messages response content block is not an object")
            if block.get("type") == "text":
                text = block.get("text")
                if not isinstance(text, str):
                    raise malformed("Messages response text block has no text")
                texts.append(text)
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        model = data.get("model")
        return Completion(
            text="".join(texts),
            model=model if isinstance(model, str) and model else self.model,
            input_tokens=optional_int(usage.get("input_tokens")),
            output_tokens=optional_int(usage.get("output_tokens")),
        )
