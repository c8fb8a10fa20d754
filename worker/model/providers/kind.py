"""What a model provider declares for the registry: its settings, checks, prices and how to
build it. ``registry.PROVIDERS`` maps each name to such a class.

A provider's settings are its own section of ``Settings``: ``TERSIFY_<NAME>_<FIELD>`` for each
field of its ``settings_type`` (``Settings.section``). The class methods here are the
defaults; an HTTP provider (``http.HttpProvider``) fills them in for any API behind a key and
a base URL, and a new provider overrides only what differs.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from tersify.settings import Price, Settings
from tersify.worker.model.providers.base import Provider
from tersify.worker.model.providers.checks import Finding


class ProviderSettings(BaseModel):
    """A provider's own settings (none by default); extra names are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ProviderKind:
    """A provider as the registry knows it: class methods only, nothing per process."""

    name: str
    settings_type: ClassVar[type[ProviderSettings]] = ProviderSettings
    local: ClassVar[bool] = False
    """True for a method run in the worker itself: no API, no circuit, nothing billed."""

    @classmethod
    def config(cls, settings: Settings) -> ProviderSettings:
        """This provider's section of ``settings``, validated (``ConfigurationError`` if bad)."""
        return settings.section(cls.name, cls.settings_type)

    @classmethod
    def create(
        cls, settings: Settings, *, pool_size: int, model: str | None = None
    ) -> Provider | None:
        """A provider object for the worker's calls, or None for a local method."""
        return None

    @classmethod
    def enabled(cls, settings: Settings) -> bool:
        """Whether the settings enable it by themselves (a key is set): with no provider named,
        the first enabled one in the registry takes summaries."""
        return False

    @classmethod
    def configured_model(cls, settings: Settings) -> str | None:
        """The model it calls unless a job names one; None for a local method."""
        return None

    @classmethod
    def price(cls, settings: Settings, model: str) -> Price | None:
        """USD per million tokens of ``model``: the one price table's entry by default."""
        return settings.model_prices.price(model)

    @classmethod
    def checks(
        cls, settings: Settings, *, named_by: str | None, used: bool, asking: bool = False
    ) -> list[Finding]:
        """What could stop it from working: ``named_by`` is the variable that chose it (None:
        chosen because it was enabled), ``used`` whether jobs will call it, ``asking`` whether
        a server on this machine may be sent a request that bills nothing (``doctor``)."""
        return []

    @classmethod
    def described(cls, settings: Settings) -> dict[str, Any]:
        """What the worker's start-up log says about it (never a secret)."""
        return {"model": cls.configured_model(settings)}
