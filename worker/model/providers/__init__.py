"""Model providers: one module per provider, registered by name in ``registry.PROVIDERS``.

Each provider is a ``ProviderKind`` (``kind``): its own settings section, its start-up
checks, its price lookup and its wire format; the HTTP ones share ``remote`` (key, base URL,
checks) and ``http`` (one JSON POST, failures mapped to reasons) over a stack of
one-connection clients (``pool``). Imports nothing of ``worker`` outside
``worker.model.providers``.
"""

from __future__ import annotations

from tersify.worker.model.providers.anthropic import AnthropicProvider
from tersify.worker.model.providers.base import (
    AnswerFormat,
    Completion,
    Correction,
    ModelRequest,
    Provider,
)
from tersify.worker.model.providers.checks import Finding, Level
from tersify.worker.model.providers.kind import ProviderKind, ProviderSettings
from tersify.worker.model.providers.openai import OpenAIProvider
from tersify.worker.model.providers.pool import ClientPool
from tersify.worker.model.providers.registry import (
    PROVIDERS,
    compaction_provider,
    kind,
    make_provider,
    summary_provider,
)
from tersify.worker.model.providers.remote import HttpProvider, HttpSettings

__all__ = [
    "PROVIDERS",
    "AnswerFormat",
    "AnthropicProvider",
    "ClientPool",
    "Completion",
    "Correction",
    "Finding",
    "HttpProvider",
    "HttpSettings",
    "Level",
    "ModelRequest",
    "OpenAIProvider",
    "Provider",
    "ProviderKind",
    "ProviderSettings",
    "compaction_provider",
    "kind",
    "make_provider",
    "summary_provider",
]
