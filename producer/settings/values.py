"""The shapes of setting values that are more than one scalar: lists, maps and prices.

Their environment form is what users already write (``a,b``; ``name=in/out,...``); pydantic
validates each item into its type. The form is split in one place (``listed``, ``pairs``) and
a JSON list or object is taken too, so every list and map setting reads the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, RootModel, model_validator
from pydantic_settings import NoDecode

_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def listed(value: Any) -> Any:
    """``a, b,,c`` as ``["a", "b", "c"]``; a JSON list as itself; anything else as given."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("["):
        return json.loads(text)
    return [item.strip() for item in text.split(",") if item.strip()]


def pairs(value: Any) -> Any:
    """``k=v, k2=v2`` as ``{"k": "v", "k2": "v2"}``; a JSON object as itself.

    An entry without ``=`` is kept with an empty value, for the value's type to refuse.
    """
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("{"):
        return json.loads(text)
    found: dict[str, str] = {}
    for entry in listed(text):
        key, _, item = entry.rpartition("=") if "=" in entry else (entry, "", "")
        found[key.strip()] = item.strip()
    return found


def written(text: str) -> Any:
    """A default as the environment writes it; validation makes it the field's type (so the
    docs show it as users write it)."""
    return text


CommaList = Annotated[tuple[str, ...], NoDecode, BeforeValidator(listed)]
"""A comma-separated list of names (or a JSON list)."""

LowerList = Annotated[
    tuple[str, ...],
    NoDecode,
    BeforeValidator(lambda v: [str(item).lower() for item in listed(v)]),
]
"""A comma-separated list of names compared without case (header and tool names)."""


def model_name(model: str) -> str:
    """The name a model's price is looked up by: lower case, without a provider prefix
    (``openai/gpt-…``) and without a release date (``claude-sonnet-4-5-20250929``)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    return _DATE.sub("", name)


class Price(BaseModel):
    """USD per million tokens in and out; written ``IN/OUT``."""

    model_config = ConfigDict(frozen=True)

    input: float
    output: float

    @model_validator(mode="before")
    @classmethod
    def _written(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        price_in, sep, price_out = value.partition("/")
        if not sep:
            raise ValueError("want IN/OUT (USD per million tokens)")
        return {"input": price_in, "output": price_out}

    def usd(self, input_tokens: int, output_tokens: int) -> float:
        """What these tokens cost."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


class PriceTable(RootModel[dict[str, Price]]):
    """Prices by model, written ``model=in/out,...``; the one lookup normalizes the name and
    matches it exactly (``model_name``)."""

    model_config = ConfigDict(frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _written(cls, value: Any) -> Any:
        found = pairs(value)
        if isinstance(found, Mapping):
            return {model_name(str(k)): v for k, v in found.items() if str(k).strip()}
        return found

    def price(self, model: str | None) -> Price | None:
        """The price of ``model``, None when the table has none."""
        return self.root.get(model_name(model)) if model else None

    def over(self, other: PriceTable) -> PriceTable:
        """This table with ``other``'s entries taking precedence."""
        return PriceTable({**self.root, **other.root})

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # names, as a mapping's
        return iter(self.root)

    def __len__(self) -> int:
        return len(self.root)


PriceSetting = Annotated[PriceTable, NoDecode]
"""A price table read from one ``TERSIFY_*`` variable."""
