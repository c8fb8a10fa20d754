"""Asking an OpenAI-compatible server in the response format it takes, and within its window.

``negotiated`` sends a request in the format the server is known to take; a refusal naming
the format moves it one step down (``compat.FORMATS``) and the request is sent again within
the same time budget. A refusal that states the context window teaches it and ends the call
as ``CONTEXT_EXCEEDED`` (the summarizer then sizes the request to fit and asks once more).
``probe`` is what ``tersify doctor`` asks of a server on this machine: one answer of one
token, which bills nothing.
"""

from __future__ import annotations

import time
from typing import Protocol

import structlog

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.worker.model.providers import compat
from tersify.worker.model.providers.base import AnswerFormat, Completion, ModelRequest
from tersify.worker.model.providers.compat import ResponseFormat

log = structlog.get_logger("tersify.model")

PROBE = ModelRequest(
    system="Answer with a JSON object.",
    user="Say ok.",
    max_tokens=1,
    answer_format=AnswerFormat(
        "ok",
        "An acknowledgement.",
        {
            "type": "object",
            "properties": {"ok": {"type": "string"}},
            "required": ["ok"],
            "additionalProperties": False,
        },
    ),
)
PROBE_SECONDS = 60.0


class Negotiating(Protocol):
    """A provider that can send in a given format and knows its server's traits."""

    base_url: str

    def traits(self) -> compat.Traits:
        """What the process knows of the server."""
        ...

    def send(self, request: ModelRequest, form: ResponseFormat, timeout: float) -> Completion:
        """One request in ``form``."""
        ...


def negotiated(
    provider: Negotiating,
    request: ModelRequest,
    timeout: float,
    configured: ResponseFormat = "json_schema",
) -> Completion:
    """``request``'s answer in the first format the server takes, from ``configured`` on (see
    the module)."""
    deadline = time.monotonic() + timeout
    traits = provider.traits()
    refusals: list[str] = []
    while True:
        form = traits.first_for(configured) if request.answer_format else "text"
        left = deadline - time.monotonic()
        if left <= 0:
            raise ProviderError(FallbackReason.TIMEOUT, "no time left for the call")
        try:
            return provider.send(request, form, left)
        except ProviderError as error:
            if request.answer_format is not None and compat.refuses_format(error):
                refusals.append(f"{form}: {error.detail}")
                after = traits.step_down(form)
                configured = after or configured
                log.warning(
                    "model_response_format_refused",
                    base_url=provider.base_url,
                    refused=form,
                    next=after,
                )
                if after is not None:
                    continue
                raise ProviderError(
                    FallbackReason.FORMAT_REFUSED,
                    f"the server at {provider.base_url} refuses every response format "
                    f"({'; '.join(refusals)})",
                ) from None
            stated = compat.stated_window(error)
            if stated is None:
                raise
            window, asked = stated
            sent = len(request.system) + len(request.user)
            traits.learn(window, sent / max(1, asked - request.max_tokens))
            raise ProviderError(
                FallbackReason.CONTEXT_EXCEEDED,
                f"the request ({asked:,} tokens) is over the model's context window "
                f"({window:,} tokens) at {provider.base_url}: the next is sized to fit "
                "(TERSIFY_OPENAI_CONTEXT_TOKENS sets the window)",
            ) from None


def probe(provider: Negotiating, configured: ResponseFormat = "json_schema") -> str:
    """What a local server takes, in one line: the response format and the context window."""
    try:
        negotiated(provider, PROBE, PROBE_SECONDS, configured)
        failure = ""
    except ProviderError as error:
        failure = f"; its answer: {error.reason.value} ({error.detail})"
    traits = provider.traits()
    form = traits.first_for(configured)
    refused = list(compat.FORMATS[: compat.FORMATS.index(form)])
    taken = f"{form} ({', '.join(refused)} refused)" if refused else form
    window = (
        f"{traits.context_tokens:,} tokens"
        if traits.context_tokens
        else "unknown until a refusal states it (TERSIFY_OPENAI_CONTEXT_TOKENS sets it)"
    )
    return (
        f"the server at {provider.base_url} answers: response format {taken}; "
        f"context window {window}{failure}"
    )
