"""What model calls cost: each provider's price lookup over the one price table
(``TERSIFY_MODEL_PRICES``, ``tersify.settings.PriceTable``)."""

from __future__ import annotations

from tersify.settings import Settings
from tersify.worker.model.providers.registry import PROVIDERS, summary_provider


def cost(
    settings: Settings,
    model: str | None,
    input_tokens: int,
    output_tokens: int,
    *,
    provider: str | None = None,
) -> float:
    """USD for these tokens on ``model`` as ``provider`` prices it (default: the summary
    provider); 0 for a model without a price."""
    kind = PROVIDERS.get(provider or summary_provider(settings))
    if kind is None or model is None:
        return 0.0
    price = kind.price(settings, model)
    return price.usd(input_tokens, output_tokens) if price is not None else 0.0


def summary_model(settings: Settings) -> str | None:
    """The model summaries go to (what estimates are priced at); None for a local method."""
    return PROVIDERS[summary_provider(settings)].configured_model(settings)


def estimate(settings: Settings, input_tokens: int, output_tokens: int) -> float:
    """USD for these tokens on the summary provider's model (0 for a local method)."""
    return cost(settings, summary_model(settings), input_tokens, output_tokens)
