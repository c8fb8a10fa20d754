"""Model providers: Anthropic and OpenAI-compatible HTTP APIs, built from ``Settings``.

One module per wire format over a shared httpx client stack (``pool``); imports nothing of
``worker`` outside ``worker.model.providers``.
"""

from __future__ import annotations

from tersify.settings import ProviderName, Settings
from tersify.worker.model.providers.anthropic import AnthropicProvider
from tersify.worker.model.providers.base import (
    AnswerFormat,
    Completion,
    Correction,
    ModelRequest,
    Provider,
)
from tersify.worker.model.providers.openai import OpenAIProvider
from tersify.worker.model.providers.pool import ClientPool


def make_provider(
    settings: Settings, name: ProviderName, *, pool_size: int, model: str | None = None
) -> Provider | None:
    """The HTTP provider called ``name`` (optionally with another model), or None for the
    local ``extractive`` provider."""
    if name is ProviderName.ANTHROPIC:
        return AnthropicProvider(
            settings.anthropic_api_key,
            settings.anthropic_base_url,
            model or settings.anthropic_model,
            connect_timeout=settings.model_connect_timeout_seconds,
            pool_size=pool_size,
        )
    if name is ProviderName.OPENAI:
        return OpenAIProvider(
            settings.openai_api_key,
            settings.openai_base_url,
            model or settings.openai_model,
            connect_timeout=settings.model_connect_timeout_seconds,
            pool_size=pool_size,
            response_format=settings.openai_response_format,
        )
    return None


__all__ = [
    "AnswerFormat",
    "AnthropicProvider",
    "ClientPool",
    "Completion",
    "Correction",
    "ModelRequest",
    "OpenAIProvider",
    "Provider",
    "make_provider",
]
