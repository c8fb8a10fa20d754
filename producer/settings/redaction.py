"""Redaction: where secrets become placeholders before text leaves the host."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field
from pydantic_settings import NoDecode

from tersify.settings.values import listed, written


class Scope(StrEnum):
    """Where redaction applies: model requests, the session log, the results."""

    MODEL = "model"
    LOG = "log"
    RESULT = "result"


def _scopes(value: Any) -> Any:
    names = [str(name).lower() for name in listed(value)]
    if "off" in names and len(names) > 1:
        raise ValueError("`off` stands alone")
    return [name for name in names if name != "off"]


Scopes = Annotated[frozenset[Scope], NoDecode, BeforeValidator(_scopes)]


class RedactionSettings(BaseModel):
    """``TERSIFY_REDACT``, parsed once into the set of scopes."""

    redact: Scopes = Field(
        written("model"),
        description="Where secrets become placeholders: model requests (`model`), the session log "
        "(`log`), results (`result`), comma-separated; `off`.",
    )
