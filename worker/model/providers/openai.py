"""OpenAI Chat Completions, or any server that speaks it: ``POST {base_url}/chat/completions``.

A request with an ``AnswerFormat`` asks for it by ``response_format``, as the server supports:
``json_schema`` (strict structured output: OpenAI, vLLM, recent Ollama), ``json_object`` (a
JSON object; the schema goes with it, which llama.cpp's servers hold the answer to, and into
the prompt), or ``text`` (nothing asked; the schema in the prompt, the answer parsed out of the
text). A server that refuses one format is asked in the next, and remembered
(``compat``); a request is sized to the model's context window where it is known. A
correction replays the refused answer as the assistant's turn and the refusal as the user's.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import Field, SecretStr

from tersify.settings import Settings
from tersify.worker.model.providers import compat
from tersify.worker.model.providers.base import AnswerFormat, Completion, ModelRequest
from tersify.worker.model.providers.checks import Finding, Level, is_loopback
from tersify.worker.model.providers.compat import ResponseFormat
from tersify.worker.model.providers.http import malformed, optional_int, post_json
from tersify.worker.model.providers.negotiate import negotiated, probe
from tersify.worker.model.providers.remote import HttpProvider, HttpSettings


class OpenAISettings(HttpSettings):
    """``TERSIFY_OPENAI_*``."""

    api_key: SecretStr | None = Field(None, description="Enables OpenAI.")
    base_url: str = Field("https://api.openai.com/v1", description="With /v1.")
    model: str = Field("gpt-4.1-mini", description="OpenAI-compatible model.")
    response_format: ResponseFormat = Field(
        "json_schema",
        description="How an OpenAI-compatible server is first asked for the JSON answer; a "
        "server that refuses it is asked in the next (`json_object`, then `text`).",
    )
    context_tokens: int | None = Field(
        None,
        ge=256,
        description="The model's context window in tokens; unset: what a server on this machine "
        "says (`/props`, `/v1/models`), else learned from the first refusal that states it.",
    )


class OpenAIProvider(HttpProvider):
    """Chat Completions; ``base_url`` includes ``/v1``, so local servers (Ollama, vLLM) work too."""

    name = "openai"
    settings_type: ClassVar[type[HttpSettings]] = OpenAISettings
    path: ClassVar[str] = "/chat/completions"

    @classmethod
    def options(cls, settings: Settings) -> dict[str, Any]:
        """Its configured response format and context window."""
        config = settings.section(cls.name, OpenAISettings)
        return {"response_format": config.response_format, "context_tokens": config.context_tokens}

    @classmethod
    def checks(
        cls, settings: Settings, *, named_by: str | None, used: bool, asking: bool = False
    ) -> list[Finding]:
        """An HTTP provider's checks; when ``asking``, a server on this machine is also asked,
        at no cost, which response format it takes and how large its context window is."""
        found = super().checks(settings, named_by=named_by, used=used)
        config = settings.section(cls.name, OpenAISettings)
        reached = [f for f in found if f.check == "model API" and f.level is Level.OK]
        if not asking or not reached or not is_loopback(config.base_url):
            return found
        provider = cls.create(settings, pool_size=1)
        try:
            reached[0] = Finding("model API", Level.OK, probe(provider, config.response_format))
        finally:
            provider.close()
        return [f for f in found if f.check != "model API"] + reached

    def __init__(
        self,
        *args: Any,
        response_format: ResponseFormat = "json_schema",
        context_tokens: int | None = None,
        **kwargs: Any,
    ) -> None:
        """``HttpProvider``'s arguments, and how the server is first asked for JSON and its
        context window when known."""
        super().__init__(*args, **kwargs)
        self.response_format = response_format
        self.context_tokens = context_tokens

    def fitting_chars(self, request: ModelRequest) -> int | None:
        """How many characters of user message fit the model's context window beside
        ``request``'s system prompt and answer; None while the window is unknown."""
        return self.traits().fitting_chars(request)

    def complete(self, request: ModelRequest, timeout: float) -> Completion:
        """One request in the response format the server takes (``negotiated``)."""
        return negotiated(self, request, timeout, self.response_format)

    def traits(self) -> compat.Traits:
        """What this process knows the server takes (a local one is asked its window once)."""
        found = compat.traits(self.base_url, self.context_tokens)
        if found.context_tokens is None and not found.described:
            found.described = True
            found.context_tokens = compat.describe(self.base_url)
        return found

    def send(self, request: ModelRequest, form: ResponseFormat, timeout: float) -> Completion:
        """One request asking for the answer in ``form``."""
        built = self._build(self._chat_body(request, form), timeout)
        return self._parse(post_json(self._pool, built, timeout, secret=self._api_key))

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        return self._chat_body(request, self.response_format)

    def _chat_body(self, request: ModelRequest, form: ResponseFormat) -> dict[str, Any]:
        wanted = request.answer_format
        system = request.system
        if wanted is not None and form != "json_schema":
            system += f"\n\nThe JSON object's schema: {json.dumps(dict(wanted.schema))}"
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
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
        if wanted is not None and form != "text":
            body["response_format"] = _format(wanted, form)
        return body

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


def _format(answer: AnswerFormat, form: ResponseFormat) -> dict[str, Any]:
    if form == "json_object":
        return {"type": "json_object", "schema": dict(answer.schema)}
    schema = {
        "name": answer.name,
        "description": answer.description,
        "schema": dict(answer.schema),
        "strict": True,
    }
    return {"type": "json_schema", "json_schema": schema}
