"""The turns a compaction sends to a model, their secrets replaced by placeholders."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tersify.chat.messages import Turn
from tersify.worker.redact import Redactor, Scope


def for_model(
    turns: Sequence[Turn], previous: str | None, redactor: Redactor
) -> tuple[list[Turn], str | None]:
    """``turns`` and the previous summary as the model may see them (``Scope.MODEL``).

    Each text, tool argument and tool result is redacted whole, before the request trims it,
    so a trim can never leave half a secret that no rule recognizes any more.
    """
    if not redactor.applies(Scope.MODEL):
        return list(turns), previous
    sent = [
        replace(
            turn,
            text=redactor.redact(turn.text),
            calls=tuple(replace(c, arguments=redactor.redact(c.arguments)) for c in turn.calls),
            results=tuple(replace(r, content=redactor.redact(r.content)) for r in turn.results),
        )
        for turn in turns
    ]
    return sent, previous and redactor.redact(previous)
