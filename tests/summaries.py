"""One job summarized in-process through a model provider on the loopback fake: the steps the
summarizer's unit tests share (the provider of a wire format, the job, its one route)."""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr

from tersify.contract import PendingSummary, ToolType
from tersify.settings import Settings
from tersify.worker.model.calls import Route
from tersify.worker.model.guard import CallGuard
from tersify.worker.model.providers import AnthropicProvider, OpenAIProvider, compat
from tersify.worker.model.providers.base import Provider
from tersify.worker.summarize.summarizer import Outcome, summarize
from tests.fakemodel import FakeModelServer


def provider_on(
    fake_model: FakeModelServer, kind: str, *, pool_size: int, key: str = "k", **openai: Any
) -> AnthropicProvider | OpenAIProvider:
    """A provider of wire format ``kind`` (``anthropic`` or ``openai``) on the fake, with API
    key ``key`` (redacted wherever it occurs in what the model says: pick one that occurs in
    no word a test reads back); ``openai``: the OpenAI provider's own options
    (``response_format``, ``context_tokens``)."""
    options = {"connect_timeout": 1.0, "pool_size": pool_size}
    if kind == "anthropic":
        return AnthropicProvider(SecretStr(key), fake_model.url, "m", **options)
    return OpenAIProvider(SecretStr(key), fake_model.openai_base_url, "m", **options, **openai)


def summarize_once(
    provider: Provider,
    output: str,
    settings: Settings,
    *,
    deadline_seconds: float,
    tool_type: ToolType = ToolType.COMMAND_OUTPUT,
    **fields: Any,
) -> Outcome:
    """Summarize ``output`` as one job of session ``s`` (tool ``bash`` unless ``fields`` names
    another) with ``provider`` as its only route."""
    fields.setdefault("tool_name", "bash")
    job = PendingSummary.build(
        deadline_seconds=deadline_seconds, session_id="s", output=output, **fields
    )
    return summarize(job, tool_type, [Route(provider, CallGuard())], settings)


def summarize_then_close(
    provider: AnthropicProvider | OpenAIProvider, output: str, settings: Settings, **options: Any
) -> Outcome:
    """``summarize_once`` with a provider made for this one job: closed afterwards, and what
    this process learned of its server (``compat``: formats, context window) forgotten."""
    try:
        return summarize_once(provider, output, settings, **options)
    finally:
        provider.close()
        compat.forget()
