"""A throwaway provider, as a new one would be added: one module, one line in the registry.

``textgen`` speaks a wire format tersify does not ship (``POST {base_url}/generate`` with one
prompt, answered by ``{"text", "tokens_in", "tokens_out"}``), declares its own settings
(``TERSIFY_TEXTGEN_BASE_URL``, ``_MODEL``, ``_USD_PER_MILLION``), its own start-up check and
its own price. ``python -m tests.integration.textgen_provider ARGS`` is ``tersify ARGS`` with
it registered, so a real worker (or ``doctor``) runs with it.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

from pydantic import Field

from tersify.settings import Price, Settings
from tersify.worker.model.providers import PROVIDERS, Completion, Finding, Level, ModelRequest
from tersify.worker.model.providers.checks import unreachable
from tersify.worker.model.providers.http import malformed, optional_int
from tersify.worker.model.providers.remote import HttpProvider, HttpSettings


class TextgenSettings(HttpSettings):
    """``TERSIFY_TEXTGEN_*``."""

    base_url: str = Field("http://127.0.0.1:8080", description="The server's root.")
    model: str = Field("textgen-small", description="The model the server runs.")
    usd_per_million: float = Field(0.0, ge=0, description="What a million tokens cost, in or out.")


class TextgenProvider(HttpProvider):
    """A text-generation server: one prompt in, one text out."""

    name = "textgen"
    settings_type: ClassVar[type[HttpSettings]] = TextgenSettings
    path: ClassVar[str] = "/generate"

    @classmethod
    def enabled(cls, settings: Settings) -> bool:
        """It needs no key: named, it is used."""
        return False

    @classmethod
    def checks(
        cls, settings: Settings, *, named_by: str | None, used: bool, asking: bool = False
    ) -> list[Finding]:
        """Its server must answer; no key is needed."""
        url = cls.config(settings).base_url
        why = unreachable(url, 2.0) if used else None
        if why is not None:
            return [Finding("textgen", Level.FAIL, f"no textgen server at {url} ({why})")]
        return [Finding("textgen", Level.OK, f"textgen server at {url}")]

    @classmethod
    def price(cls, settings: Settings, model: str) -> Price | None:
        """One flat price for everything, from its own setting."""
        usd = settings.section(cls.name, TextgenSettings).usd_per_million
        return Price(input=usd, output=usd)

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        prompt = f"{request.system}\n\n{request.user}"
        if request.correction is not None:
            prompt += f"\n\n{request.correction.answer.text}\n\n{request.correction.error}"
        model = request.model or self.model
        return {"model": model, "prompt": prompt, "max_new_tokens": request.max_tokens}

    def _parse(self, data: dict[str, Any]) -> Completion:
        text = data.get("text")
        if not isinstance(text, str):
            raise malformed("textgen answer has no text")
        return Completion(
            text=text,
            model=self.model,
            input_tokens=optional_int(data.get("tokens_in")),
            output_tokens=optional_int(data.get("tokens_out")),
        )


def register() -> None:
    """The one line a provider adds to ``registry.PROVIDERS``."""
    PROVIDERS[TextgenProvider.name] = TextgenProvider


if __name__ == "__main__":
    from tersify.worker.cli import main

    register()
    sys.exit(main(sys.argv[1:]))
