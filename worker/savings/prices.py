"""What the agents' own models charge for the tokens a tool output adds to their context.

Prices come from ``TERSIFY_AGENT_MODEL_PRICES`` (``model=in/out,...``, USD per million tokens,
the same form as ``TERSIFY_MODEL_PRICES``), then ``--prices`` entries over them, and ``--price``
for every model without one. A model is looked up as every price is (``PriceTable.price``):
its name normalized, then matched exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from tersify.errors import invalid_fields
from tersify.settings import PriceTable


@dataclass(frozen=True)
class Prices:
    """The agents' model prices and the input price of a model without one."""

    table: PriceTable
    default: float | None = None

    @classmethod
    def of(cls, configured: PriceTable, extra: str = "", default: float | None = None) -> Prices:
        """The configured table with ``extra`` entries (``model=in/out,...``) over it;
        ``ValueError`` names a bad one."""
        try:
            extras = PriceTable.model_validate(extra)
        except ValidationError as exc:
            raise ValueError(f"bad model price: {invalid_fields(exc)}") from None
        return cls(configured.over(extras), default)

    def input_price(self, model: str | None) -> float | None:
        """USD per million input tokens of ``model``; None when it has no price."""
        found = self.table.price(model)
        return found.input if found is not None else self.default
