"""OpenAI Chat Completions, or any server that speaks it: ``POST {base_url}/chat/completions``."""

from __future__ import annotations

from typing import Any

from tersify.worker.model.providers.base import Completion, ModelRequest
from tersify.worker.model.providers.http import HttpProvider, malformed, optional_int


class OpenAIProvider(HttpProvider):
    """Chat Completions; ``base_url`` includes ``/v1``, so local servers (Ollama, vLLM) work too."""

    path = "/chat/completions"
    name = "openai"

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        return {
            "model": request.model or self.model,
            "max_tokens": request.max_tokens,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ],
        }

    def _api_headers(self) -> dict[str, str]:
        # Local OpenAI-compatible servers need no key; send none rather than an empty bearer.
        if self._api_key is None:
            return {}
        return {"authorization": f"Bearer {self._api_key.get_secret_value()}"}

    def _parse(self, data: dict[str, Any]) -> Completion:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise malformed("Chat Completions response has no choices")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise malformed("Chat Completions choice has no message")
        text = message.get("content")
        # A null content (a refusal or a tool call) is an empty answer for the caller to judge.
        if text is not None and not isinstance(text, str):
            raise malformed("Chat Completions message content is not text")
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        model = data.get("model")
        return Completion(
            text=text or "",
            model=model if isinstance(model, str) and model else self.model,
            input_tokens=optional_int(usage.get("prompt_tokens")),
            output_tokens=optional_int(usage.get("completion_tokens")),
        )
