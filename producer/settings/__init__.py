"""The one settings class: every tunable default, read from ``TERSIFY_*`` environment variables.

``Settings`` is assembled from one group per part (``redis``, ``limits``, ``models``, ``jobs``,
``sessionlog``, ``redaction``, ``workers``, ``webhooks``, ``gate``, ``mcp``, ``api``,
``gateway``, ``reports``): each group's module owns its fields and their checks, and a
function that reads one part may ask for that group's type alone. Fields stay flat
(``TERSIFY_REDIS_URL``, not ``TERSIFY_REDIS__URL``) because the variable names are public
surface that deploy files and users already rely on. Lists and maps are typed values parsed by
pydantic (``values``).

A model provider declares its own settings (``TERSIFY_<NAME>_<FIELD>``) next to its wire
format; they are kept as this class's extra values and read, validated, with ``section``.
Build one ``Settings()`` at each entry point and pass it down; nothing else reads the
environment.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from pydantic import BaseModel, SecretStr, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from tersify.errors import ConfigurationError
from tersify.settings.api import ApiSettings, Quota
from tersify.settings.gate import GateSettings
from tersify.settings.gateway import GatewaySettings
from tersify.settings.jobs import JobSettings
from tersify.settings.limits import LimitsSettings
from tersify.settings.mcp import McpSettings
from tersify.settings.models import ModelSettings
from tersify.settings.redaction import RedactionSettings, Scope
from tersify.settings.redis import REDIS_SCHEMES, RedisSettings
from tersify.settings.reports import ReportSettings
from tersify.settings.sessionlog import SESSION_LOG_DEFAULT, SessionLogSettings
from tersify.settings.values import Price, PriceTable
from tersify.settings.webhooks import WebhookSettings
from tersify.settings.workers import WorkerSettings

PREFIX = "TERSIFY_"
Section = TypeVar("Section", bound=BaseModel)


class _UnclaimedEnv(EnvSettingsSource):
    """Every ``TERSIFY_*`` variable no field claims, kept as an extra value (lower case, the
    prefix off): providers' sections, and names to warn about."""

    def __call__(self) -> dict[str, Any]:
        fields = self.settings_cls.model_fields
        found = {}
        for name, value in self.env_vars.items():
            key = name.lower().removeprefix(PREFIX.lower())
            if name.lower().startswith(PREFIX.lower()) and key not in fields:
                found[key] = value
        return found


# The groups are listed last-first: pydantic collects fields from the last base on.
class Settings(
    BaseSettings,
    ReportSettings,
    GatewaySettings,
    ApiSettings,
    McpSettings,
    GateSettings,
    WebhookSettings,
    WorkerSettings,
    RedactionSettings,
    SessionLogSettings,
    JobSettings,
    ModelSettings,
    LimitsSettings,
    RedisSettings,
):
    """Every tersify default; docs/CONFIGURATION.md lists them."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, extra="allow", frozen=True, validate_default=True
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The usual sources, then the ``TERSIFY_*`` variables no field claims."""
        unclaimed = _UnclaimedEnv(settings_cls, case_sensitive=False)
        return init_settings, env_settings, dotenv_settings, file_secret_settings, unclaimed

    @model_validator(mode="before")
    @classmethod
    def _sealed_extras(cls, values: Any) -> Any:
        """Values no field claims are kept as secrets until their section reads them: a key
        among them must never reach a repr, a dump or a log."""
        if not isinstance(values, dict):
            return values
        return {k: v if k in cls.model_fields else _sealed(v) for k, v in values.items()}

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update``'s values validated as the environment's are (a list written
        ``a,b`` becomes a list), the rest as they are."""
        if update:
            fields = type(self).model_fields
            merged = {**self.__dict__, **(self.model_extra or {}), **update}
            checked = type(self).__pydantic_validator__.validate_python(merged)
            update = {
                k: getattr(checked, k) if k in fields else _sealed(v) for k, v in update.items()
            }
        return super().model_copy(update=update, deep=deep)

    def extra_value(self, name: str) -> Any:
        """The value of ``TERSIFY_<NAME>`` that no field claims (None when unset)."""
        return _opened((self.model_extra or {}).get(name))

    def extra_names(self) -> list[str]:
        """The ``TERSIFY_*`` names set here that no field of this class claims."""
        return [PREFIX + name.upper() for name in (self.model_extra or {})]

    def section(self, prefix: str, model: type[Section]) -> Section:
        """The settings ``TERSIFY_<PREFIX>_<FIELD>`` validated as ``model`` (a part's own).

        A bad value raises ``ConfigurationError`` naming its variable.
        """
        extra = self.model_extra or {}
        values = {
            name: _opened(extra[f"{prefix}_{name}"])
            for name in model.model_fields
            if f"{prefix}_{name}" in extra
        }
        try:
            return model.model_validate(values)
        except ValidationError as exc:
            problem = settings_problem(exc, prefix=f"{prefix}_", model=model)
            raise ConfigurationError(problem) from None

    def traces_exporter(self) -> str | None:
        """The span exporter the standard ``OTEL_*`` variables ask for, or None (no traces)."""
        env = os.environ  # noqa: TID251 - the settings module is where the environment is read
        if env.get("OTEL_SDK_DISABLED", "").lower() == "true":
            return None
        named = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
        if named in {"otlp", "console"}:
            return named
        endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        return "otlp" if not named and any(env.get(k) for k in endpoints) else None

    def child_env(self, **overrides: str) -> dict[str, str]:
        """The environment for a child process: this one's, with ``TERSIFY_*`` overrides."""
        env = dict(os.environ)  # noqa: TID251 - the settings module is where the environment is read
        env.update({f"{PREFIX}{name.upper()}": value for name, value in overrides.items()})
        return env


def _sealed(value: Any) -> Any:
    return value if value is None or isinstance(value, SecretStr) else SecretStr(value)


def _opened(value: Any) -> Any:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def _is_secret(model: type[BaseModel], name: str) -> bool:
    field = model.model_fields.get(name)
    annotation = field.annotation if field is not None else None
    return annotation is SecretStr or SecretStr in typing.get_args(annotation)


def settings_problem(
    error: ValidationError, *, prefix: str = "", model: type[BaseModel] | None = None
) -> str:
    """One line naming each ``TERSIFY_*`` variable ``error`` is about and what is wrong with it.

    ``prefix`` and ``model`` name a section's variables and fields; secret values are never
    shown (a field typed ``SecretStr``, or any value of a section whose model is unknown).
    """
    model = model or Settings
    parts = []
    for item in error.errors(include_url=False):
        where = str(item["loc"][0]) if item["loc"] else ""
        message = str(item["msg"]).removeprefix("Value error, ")
        if message[1:2].islower():  # pydantic's sentences, not a variable's name
            message = message[:1].lower() + message[1:]
        if not where:  # a check across settings names its variables itself
            parts.append(message)
            continue
        secret = _is_secret(model, where) if where in model.model_fields else bool(prefix)
        entry = ".".join(str(part) for part in item["loc"][1:])  # inside a list or a map
        shown = "" if secret else f"={item.get('input')!s}"
        named = f"{PREFIX}{prefix.upper()}{where.upper()}" + (f" {entry}" if entry else "")
        parts.append(f"{named}{shown}: {message}")
    return "; ".join(parts)


class _DebugOnly(BaseSettings):
    """``TERSIFY_DEBUG`` alone, so it is read even when another setting is invalid."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore")

    debug: bool = False


def debug_requested() -> bool:
    """Whether ``TERSIFY_DEBUG`` asks the CLI to show tracebacks (an invalid value: no)."""
    try:
        return _DebugOnly().debug
    except ValidationError:
        return False


def fields_of(model: type[BaseModel], prefix: str = "") -> dict[str, FieldInfo]:
    """``TERSIFY_*`` name → field, for ``model``'s fields under ``prefix`` (a section's)."""
    return {f"{PREFIX}{prefix}{name}".upper(): f for name, f in model.model_fields.items()}


__all__ = [
    "REDIS_SCHEMES",
    "SESSION_LOG_DEFAULT",
    "ApiSettings",
    "GateSettings",
    "GatewaySettings",
    "JobSettings",
    "LimitsSettings",
    "McpSettings",
    "ModelSettings",
    "Price",
    "PriceTable",
    "Quota",
    "RedactionSettings",
    "RedisSettings",
    "ReportSettings",
    "Scope",
    "SessionLogSettings",
    "Settings",
    "WebhookSettings",
    "WorkerSettings",
    "debug_requested",
    "fields_of",
    "settings_problem",
]
