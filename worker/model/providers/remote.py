"""A model API over HTTP behind a key and a base URL: its settings, its checks, its calls.

Subclasses give the wire format (path, auth headers, request body, parsing) and their
settings' defaults; everything else a provider declares for the registry is here.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Self

import httpx
from pydantic import Field, SecretStr

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.worker.model.providers.base import Completion, ModelRequest
from tersify.worker.model.providers.checks import (
    PROBE_SECONDS,
    Finding,
    Level,
    is_loopback,
    unreachable,
)
from tersify.worker.model.providers.http import post_json, short
from tersify.worker.model.providers.kind import ProviderKind, ProviderSettings
from tersify.worker.model.providers.pool import ClientPool

USER_AGENT = "tersify/0.1"


class HttpSettings(ProviderSettings):
    """``TERSIFY_<NAME>_API_KEY``, ``_BASE_URL`` and ``_MODEL``."""

    api_key: SecretStr | None = Field(None, description="Enables the provider.")
    base_url: str = Field(description="Where its API is called.")
    model: str = Field(description="Its model.")


class HttpProvider(ProviderKind):
    """An HTTP model API: subclasses give the path, auth headers, request body and parsing."""

    name = "http"
    settings_type: ClassVar[type[HttpSettings]] = HttpSettings
    path: ClassVar[str] = ""

    def __init__(
        self,
        api_key: SecretStr | None,
        base_url: str,
        model: str,
        *,
        connect_timeout: float,
        pool_size: int,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._connect_timeout = connect_timeout
        self._pool = ClientPool(pool_size, timeout=httpx.Timeout(None, connect=connect_timeout))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    # What the registry reads (class methods: no object is made for them).

    @classmethod
    def config(cls, settings: Settings) -> HttpSettings:
        """This provider's section of ``settings``."""
        return settings.section(cls.name, cls.settings_type)

    @classmethod
    def create(cls, settings: Settings, *, pool_size: int, model: str | None = None) -> Self:
        """A provider on its configured key and base URL (``model`` instead of its own), with
        whatever else its own settings give (``options``)."""
        config = cls.config(settings)
        return cls(
            config.api_key,
            config.base_url,
            model or config.model,
            connect_timeout=settings.model_connect_timeout_seconds,
            pool_size=pool_size,
            **cls.options(settings),
        )

    @classmethod
    def options(cls, settings: Settings) -> dict[str, Any]:
        """The keyword arguments beyond the key, base URL and model that a subclass's
        constructor takes from its settings; none here."""
        return {}

    @classmethod
    def enabled(cls, settings: Settings) -> bool:
        """A key is set."""
        return cls.config(settings).api_key is not None

    @classmethod
    def configured_model(cls, settings: Settings) -> str | None:
        """The configured model."""
        return cls.config(settings).model

    @classmethod
    def checks(
        cls, settings: Settings, *, named_by: str | None, used: bool, asking: bool = False
    ) -> list[Finding]:
        """Its key is set when a variable names it (a server on this machine needs none); its
        host answers when jobs will call it."""
        config = cls.config(settings)
        key = f"TERSIFY_{cls.name.upper()}_API_KEY"
        local = is_loopback(config.base_url)
        if config.api_key is None and named_by is not None and not local:
            if settings.allow_missing_key:
                then = "starting anyway (TERSIFY_ALLOW_MISSING_KEY): every job will fall back"
                return [
                    Finding(
                        "provider",
                        Level.WARN,
                        f"{named_by}={cls.name} but {key} is unset: {then} to truncation",
                    )
                ]
            return [
                Finding(
                    "provider",
                    Level.FAIL,
                    f"{named_by}={cls.name} but {key} is unset: set {key}, or "
                    "TERSIFY_ALLOW_MISSING_KEY=true to start with fallbacks only",
                )
            ]
        if not used or (config.api_key is None and not local):
            return []
        return [cls.reachability(settings, config)]

    @classmethod
    def reachability(cls, settings: Settings, config: HttpSettings) -> Finding:
        """Whether a TCP connection to the base URL's host and port can be made."""
        url = config.base_url
        why = unreachable(url, min(settings.model_connect_timeout_seconds, PROBE_SECONDS))
        if why is None:
            return Finding("model API", Level.OK, f"the {cls.name} API is reachable at {url}")
        return Finding(
            "model API",
            Level.WARN,
            f"cannot reach the {cls.name} API at {url} ({why}): jobs will fall back to "
            f"truncation until it answers (TERSIFY_{cls.name.upper()}_BASE_URL)",
        )

    @classmethod
    def described(cls, settings: Settings) -> dict[str, Any]:
        """Model, base URL and whether the key is set."""
        config = cls.config(settings)
        return {
            "model": config.model,
            "base_url": config.base_url,
            "api_key": "set" if config.api_key is not None else "unset",
        }

    # What a worker calls.

    def complete(self, request: ModelRequest, timeout: float) -> Completion:
        """Send one request; give up after ``timeout`` seconds in total. Raises ProviderError."""
        if timeout <= 0:
            raise ProviderError(FallbackReason.TIMEOUT, "no time left for the call")
        http_request = self._build(self._body(request), timeout)
        return self._parse(post_json(self._pool, http_request, timeout, secret=self._api_key))

    def close(self) -> None:
        """Close every pooled connection."""
        self._pool.close()

    def fitting_chars(self, request: ModelRequest) -> int | None:
        """Unknown by default: the request is sized by the settings alone."""
        return None

    def _api_headers(self) -> dict[str, str]:
        return {}

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _parse(self, data: dict[str, Any]) -> Completion:
        raise NotImplementedError

    def _build(self, body: dict[str, Any], timeout: float) -> httpx.Request:
        # Lone surrogates in a tool output must not fail the call: encode them as "?".
        content = json.dumps(body, ensure_ascii=False).encode("utf-8", "replace")
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "user-agent": USER_AGENT,
            **self._api_headers(),
        }
        limits = httpx.Timeout(timeout, connect=min(self._connect_timeout, timeout))
        try:
            return httpx.Request(
                "POST",
                self.base_url + self.path,
                headers=headers,
                content=content,
                extensions={"timeout": limits.as_dict()},
            )
        except httpx.InvalidURL as exc:
            raise ProviderError(FallbackReason.CLIENT_ERROR, short(f"bad URL: {exc}")) from None
