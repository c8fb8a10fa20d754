"""OpenAI Chat Completions, or any server that speaks it: ``POST {base_url}/chat/completions``.

A request with an ``AnswerFormat`` asks for it by ``response_format``, as the server supports:
``json_schema`` (strict structured output: OpenAI, vLLM, recent Ollama), ``json_object`` (any
JSON object; the prompt describes the fields), or ``text`` (nothing asked: for servers that
refuse the parameter; the answer is parsed out of the text). A correction replays the refused
answer as the assistant's turn and the refusal as the user's.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import Field, SecretStr

from tersify.settings import Settings
from tersify.worker.model.providers.base import AnswerFormat, Completion, ModelRequest
from tersify.worker.model.providers.http import malformed, optional_int
from tersify.worker.model.providers.remote import HttpProvider, HttpSettings

ResponseFormat = Literal["json_schema", "json_object", "text"]


class OpenAISettings(HttpSettings):
    """``TERSIFY_OPENAI_*``."""

    api_key: SecretStr | None = Field(None, description="Enables OpenAI.")
    base_url: str = Field("https://api.openai.com/v1", description="With /v1.")
    model: str = Field("gpt-4.1-mini", description="OpenAI-compatible model.")
    response_format: ResponseFormat = Field(
        "json_schema",
        description="How an OpenAI-compatible server is asked for the JSON answer; `text` for "
        "servers that refuse `response_format`.",
    )


class OpenAIProvider(HttpProvider):
    """Chat Completions; ``base_url`` includes ``/v1``, so local servers (Ollama, vLLM) work too."""

    name = "openai"
    settings_type: ClassVar[type[HttpSettings]] = OpenAISettings
    path: ClassVar[str] = "/chat/completions"

    @classmethod
    def create(
        cls, settings: Settings, *, pool_size: int, model: str | None = None
    ) -> OpenAIProvider:
        """A provider on its configured key, base URL and response format."""
        config = settings.section(cls.name, OpenAISettings)
        return cls(
            config.api_key,
            config.base_url,
            model or config.model,
            connect_timeout=settings.model_connect_timeout_seconds,
            pool_size=pool_size,
            response_format=config.response_format,
        )

    def __init__(
        self,
        api_key: SecretStr | None,
        base_url: str,
        model: str,
        *,
        connect_timeout: float,
        pool_size: int,
        response_format: ResponseFormat = "json_schema",
    ) -> None:
        super().__init__(
            api_key, base_url, model, connect_timeout=connect_timeout, pool_size=pool_size
        )
        self.response_format = response_format

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.user},
        ]
        if request.correction is not None:
            answer = request.correction.answer
            said = answer.text.strip() or (json.dumps(answer.data) if answer.data else "")
            messages.append({"role": "assistant", "content": said or "(no answer)"})
            messages.append({"role": "user", "content": request.correction.error})
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": request.max_tokens,
            "messages": messages,
        }
        if request.answer_format is not None and self.response_format != "text":
            body["response_format"] = self._format(request.answer_format)
        return body

    def _format(self, answer: AnswerFormat) -> dict[str, Any]:
        if self.response_format == "json_object":
            return {"type": "json_object"}
        schema = {
            "name": answer.name,
            "description": answer.description,
            "schema": dict(answer.schema),
            "strict": True,
        }
        return {"type": "json_schema", "json_schema": schema}

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
