"""What every model provider takes and returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class AnswerFormat:
    """A JSON object the model answers with instead of free text: its name and JSON Schema.

    The schema keeps to what every structured-output API takes (OpenAI's strict mode is the
    narrowest: every object closed, every property required).
    """

    name: str  # letters, digits, "_" and "-", at most 64
    description: str
    schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Completion:
    """A model's answer and the usage it reported.

    ``data`` is the answer's JSON object when the API returned one as such (a tool call's
    input); ``call_id`` the API's id of that call, which a correction refers back to.
    """

    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    data: dict[str, Any] | None = None
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Correction:
    """A refused answer sent back with why it was refused, so the model answers once more."""

    answer: Completion
    error: str


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """A provider-neutral request: one system prompt, one user message, optionally the JSON
    object to answer with and a refused earlier answer to correct."""

    system: str
    user: str
    max_tokens: int
    input_truncated: bool = False
    model: str | None = None  # the job's own model; None: the provider's configured one
    answer_format: AnswerFormat | None = None
    correction: Correction | None = None


class Provider(Protocol):
    """A model API reachable over HTTP. ``complete`` raises ``ProviderError`` on any failure."""

    name: str
    model: str

    def complete(self, request: ModelRequest, timeout: float) -> Completion:
        """Send one request; give up after ``timeout`` seconds in total."""
        ...

    def fitting_chars(self, request: ModelRequest) -> int | None:
        """How many characters of user message fit the model's context window beside
        ``request``'s system prompt and answer; None when the window is not known."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
