"""What a rewrite saved: estimated input tokens before and after, and their list price.

Tokens are tersify's one estimate (``worker.model.tokens``) over the request body as the client
sent it and as it went on; the price is the request model's input price in
``TERSIFY_MODEL_PRICES``, looked up as every price is (``PriceTable.price``: a dated name such as
``claude-sonnet-4-5-20250929`` finds ``claude-sonnet-4-5``). Prompt-cache reads cost less than
list price, so the saving is an upper estimate.
"""

from __future__ import annotations

from tersify.settings import Settings
from tersify.worker.model.tokens import estimate_tokens


def input_price(settings: Settings, model: str | None) -> float | None:
    """USD per million input tokens of ``model``; None when no configured price matches."""
    price = settings.model_prices.price(model)
    return price.input if price is not None else None


def tokens(text: str) -> int:
    """Estimated tokens of a request body."""
    return estimate_tokens(text)


def saved_usd(settings: Settings, model: str | None, before: int, after: int) -> float | None:
    """The estimated input cost saved; None when the model has no price."""
    price = input_price(settings, model)
    return None if price is None else (before - after) * price / 1_000_000
