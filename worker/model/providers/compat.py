"""What an OpenAI-compatible server accepts, learned once per base URL and remembered by the
process: the response format that works and the model's context window.

Servers differ: OpenAI and vLLM take ``json_schema``; llama-cpp-python's server refuses it
(HTTP 500 naming ``response_format``) but constrains ``json_object`` to a schema sent with it;
others take only plain text. A refusal that names the response format moves the server one
step down ``FORMATS`` for every later call. The context window comes from the setting, else
from the server's own description (llama.cpp's ``/props``, ``/v1/models`` metadata: read once,
only from a server on this machine), else from the first refusal that states it ("maximum
context length is N tokens … you requested M tokens"), which also tells how many characters
a token is here. Requests are then sized to fit (``Traits.fitting_chars``).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.worker.model.providers.base import ModelRequest
from tersify.worker.model.providers.checks import is_loopback
from tersify.worker.model.providers.remote import USER_AGENT

ResponseFormat = Literal["json_schema", "json_object", "text"]
FORMATS: tuple[ResponseFormat, ...] = ("json_schema", "json_object", "text")
CHARS_PER_TOKEN = 3.0
"""Characters per token assumed until a server's refusal measures it (numbered lines and
code run shorter than prose's four)."""
MARGIN_TOKENS = 64
"""Room left in the window for the chat template's own tokens."""
DESCRIBE_SECONDS = 5.0

_STATED = re.compile(
    r"maximum context length is ([0-9][0-9,]*) tokens.*?requested ([0-9][0-9,]*) tokens", re.S
)
_FORMAT_WORDS = ("response_format", "json_schema", "json_object")


@dataclass
class Traits:
    """What one server accepts, as far as this process knows: ``response_format`` is the
    first format it has not refused (a provider asks in the later of it and its own)."""

    response_format: ResponseFormat = "json_schema"
    context_tokens: int | None = None
    chars_per_token: float = CHARS_PER_TOKEN
    described: bool = False

    def first_for(self, configured: ResponseFormat) -> ResponseFormat:
        """The format to ask in: ``configured``, unless the server refused it already."""
        return max(configured, self.response_format, key=FORMATS.index)

    def step_down(self, refused: ResponseFormat) -> ResponseFormat | None:
        """The next format after ``refused`` (remembered), or None when none is left."""
        later = FORMATS[FORMATS.index(refused) + 1 :]
        if not later:
            return None
        if FORMATS.index(self.response_format) <= FORMATS.index(refused):
            self.response_format = later[0]
        return self.response_format

    def learn(self, window: int, chars_per_token: float) -> None:
        """A refusal's word on the window, and how many characters a token was in it (kept
        when smaller: a window is never overfilled twice)."""
        self.context_tokens = window
        self.chars_per_token = max(1.0, min(self.chars_per_token, chars_per_token * 0.9))

    def fitting_chars(self, request: ModelRequest) -> int | None:
        """How many characters of user message fit beside ``request``'s system prompt and
        answer; None when the window is unknown."""
        if self.context_tokens is None:
            return None
        room = self.context_tokens - request.max_tokens - MARGIN_TOKENS
        room -= int(len(request.system) / self.chars_per_token) + 1
        return max(0, int(room * self.chars_per_token))


_known: dict[str, Traits] = {}
_lock = threading.Lock()


def traits(base_url: str, context_tokens: int | None = None) -> Traits:
    """The process's record of the server at ``base_url`` (a configured window is final)."""
    with _lock:
        found = _known.get(base_url)
        if found is None:
            found = _known[base_url] = Traits(context_tokens=context_tokens)
        elif context_tokens is not None:
            found.context_tokens = context_tokens
    return found


def forget() -> None:
    """Forget every server (a test's fresh start)."""
    with _lock:
        _known.clear()


def refuses_format(error: ProviderError) -> bool:
    """Whether ``error`` is a server refusing the request's response format."""
    refused = error.reason in (FallbackReason.SERVER_ERROR, FallbackReason.CLIENT_ERROR)
    return refused and any(word in error.detail.lower() for word in _FORMAT_WORDS)


def stated_window(error: ProviderError) -> tuple[int, int] | None:
    """The context window and the request's tokens a refusal states, if it states them."""
    found = _STATED.search(error.detail)
    if error.reason is not FallbackReason.CLIENT_ERROR or found is None:
        return None
    window, asked = (int(group.replace(",", "")) for group in found.groups())
    return window, asked


def describe(base_url: str, timeout: float = DESCRIBE_SECONDS) -> int | None:
    """The context window a server on this machine says it has (``/props``, ``/v1/models``);
    None when it says nothing, or is not on this machine (nothing is asked of it)."""
    if not is_loopback(base_url):
        return None
    parts = urlsplit(base_url)
    root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    models = base_url.rstrip("/") + "/models"
    for url, read in ((root + "/props", _props_window), (models, _models_window)):
        try:
            answer = httpx.get(url, timeout=timeout, headers={"user-agent": USER_AGENT})
            window = read(answer.json()) if answer.is_success else None
        except (httpx.HTTPError, ValueError):
            window = None
        if window:
            return window
    return None


def _props_window(data: Any) -> int | None:
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    found = settings.get("n_ctx") if isinstance(settings, dict) else None
    return _count(found if found is not None else data.get("n_ctx"))


def _models_window(data: Any) -> int | None:
    listed = data.get("data") if isinstance(data, dict) else None
    for model in listed if isinstance(listed, list) else []:
        if not isinstance(model, dict):
            continue
        found = model.get("meta")
        meta: dict[str, Any] = found if isinstance(found, dict) else {}
        for value in (
            meta.get("n_ctx"),
            model.get("max_model_len"),
            model.get("context_length"),
            meta.get("n_ctx_train"),
        ):
            if (window := _count(value)) is not None:
                return window
    return None


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None
