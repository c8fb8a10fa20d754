"""What every model provider takes and returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """A provider-neutral summarization request: one system prompt, one user message."""

    system: str
    user: str
    max_tokens: int
    input_truncated: bool = False
    splice: str | None = None  # text the caller inserts verbatim into the answer (a file's range)
    model: str | None = None  # the job's own model; None: the provider's configured one


@dataclass(frozen=True, slots=True)
class Completion:
    """A model's answer and the usage it reported."""

    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None


class Provider(Protocol):
    """A model API reachable over HTTP. ``complete`` raises ``ProviderError`` on any failure."""

    name: str
    model: str

    def complete(self, request: ModelRequest, timeout: float) -> Completion:
        """Send one request; give up after ``timeout`` seconds in total."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
