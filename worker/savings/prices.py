"""What the agents' own models charge for the tokens a tool output adds to their context.

Prices come from ``TERSIFY_AGENT_MODEL_PRICES`` (``model=in/out,...``, USD per million tokens,
the same form as ``TERSIFY_MODEL_PRICES``), then ``--prices`` entries over them, and ``--price``
for every model without one. A model name is normalized before it is looked up, then matched
exactly: lower case, without a provider prefix (``google/gemini-…``, ``openai/gpt-…``) and
without a release date (``claude-sonnet-4-5-20250929``, ``gpt-4.1-2025-04-14``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tersify.worker.model.pricing import parse_prices

_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def normalize(model: str) -> str:
    """The name a price is looked up by."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    return _DATE.sub("", name)


@dataclass(frozen=True)
class Prices:
    """Input prices (USD per million tokens) by normalized model name, and the fallback."""

    table: dict[str, float]
    default: float | None = None

    @classmethod
    def of(cls, configured: str, extra: str = "", default: float | None = None) -> Prices:
        """The configured table with ``extra`` entries over it; ``ValueError`` names a bad one."""
        merged = {**parse_prices(configured), **parse_prices(extra)}
        return cls({normalize(name): pair[0] for name, pair in merged.items()}, default)

    def input_price(self, model: str | None) -> float | None:
        """USD per million input tokens of ``model``; None when it has no price."""
        if model is not None and (found := self.table.get(normalize(model))) is not None:
            return found
        return self.default
