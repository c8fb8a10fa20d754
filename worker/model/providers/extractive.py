"""The built-in extractive summarizer as a provider: local, keyless, free."""

from __future__ import annotations

from tersify.settings import Price, Settings
from tersify.worker.model.providers.kind import ProviderKind


class ExtractiveProvider(ProviderKind):
    """No model is called: the worker's extractive summarizer answers (``worker/shrink``)."""

    name = "extractive"
    local = True

    @classmethod
    def price(cls, settings: Settings, model: str) -> Price | None:
        """Nothing is billed."""
        return Price(input=0.0, output=0.0)
