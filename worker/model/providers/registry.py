"""Every model provider by name, and the questions only the registry can answer.

Adding a provider is one module (a ``ProviderKind``: its settings, checks, price and wire
format) and one line in ``PROVIDERS``. Which provider summaries and compactions use, what
the settings' names are, and which ``TERSIFY_*`` names nothing reads are all derived here.
"""

from __future__ import annotations

import difflib

from pydantic.fields import FieldInfo

from tersify.errors import ConfigurationError
from tersify.settings import Settings, fields_of
from tersify.worker.model.providers.anthropic import AnthropicProvider
from tersify.worker.model.providers.base import Provider
from tersify.worker.model.providers.extractive import ExtractiveProvider
from tersify.worker.model.providers.kind import ProviderKind
from tersify.worker.model.providers.openai import OpenAIProvider

PROVIDERS: dict[str, type[ProviderKind]] = {
    AnthropicProvider.name: AnthropicProvider,
    OpenAIProvider.name: OpenAIProvider,
    ExtractiveProvider.name: ExtractiveProvider,
}
"""Every provider; with none named, the first enabled one (a key set) takes summaries."""

LOCAL = ExtractiveProvider.name
NAMING = ("summary_provider", "main_provider", "failover_provider", "compaction_provider")
"""The settings that name a provider, in the order a user would fix them."""
OTHER_NAMES = frozenset({"TERSIFY_DEBUG"})
"""``TERSIFY_*`` names read outside ``Settings`` (the CLI reads ``TERSIFY_DEBUG`` first)."""


def kind(name: str, variable: str = "the provider") -> type[ProviderKind]:
    """The provider called ``name``; ``ConfigurationError`` names ``variable`` when none is."""
    found = PROVIDERS.get(name)
    if found is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigurationError(f"{variable}={name}: no such provider (known: {known})")
    return found


def named(settings: Settings) -> dict[str, str]:
    """Each provider a setting names, with the first ``TERSIFY_*`` variable that names it."""
    found: dict[str, str] = {}
    for field in NAMING:
        value = getattr(settings, field)
        if value is not None:
            found.setdefault(value, f"TERSIFY_{field.upper()}")
    return found


def summary_provider(settings: Settings) -> str:
    """The provider summaries use: its own setting, else the main one, else the first enabled
    one, else the local extractive summarizer."""
    chosen = settings.summary_provider or settings.main_provider
    if chosen is not None:
        return chosen
    return next((n for n, k in PROVIDERS.items() if k.enabled(settings)), LOCAL)


def compaction_provider(settings: Settings) -> str:
    """The provider compaction uses: its own setting, else the summary provider's choice."""
    return settings.compaction_provider or summary_provider(settings)


def used(settings: Settings) -> list[str]:
    """The providers jobs will call: summary, compaction, failover (each once, in order)."""
    chosen = [summary_provider(settings), compaction_provider(settings)]
    chosen += [settings.failover_provider] if settings.failover_provider else []
    return list(dict.fromkeys(chosen))


def remote() -> list[str]:
    """The providers that are model APIs (each has a circuit), in registry order."""
    return [name for name, provider in PROVIDERS.items() if not provider.local]


def make_provider(
    settings: Settings, name: str, *, pool_size: int, model: str | None = None
) -> Provider | None:
    """The provider called ``name`` (optionally with another model), or None for a local one."""
    return kind(name).create(settings, pool_size=pool_size, model=model)


def setting_fields() -> dict[str, FieldInfo]:
    """Every ``TERSIFY_*`` variable tersify reads, with its field: ``Settings``' own and every
    provider's section."""
    found = fields_of(Settings)
    for name, provider in PROVIDERS.items():
        found.update(fields_of(provider.settings_type, f"{name}_"))
    return found


def unknown_names(settings: Settings) -> list[tuple[str, str | None]]:
    """Each ``TERSIFY_*`` name set that nothing reads, with the closest known name (or None)."""
    known = set(setting_fields()) | OTHER_NAMES
    return [
        (name, next(iter(difflib.get_close_matches(name, known, n=1, cutoff=0.75)), None))
        for name in settings.extra_names()
        if name not in known
    ]
