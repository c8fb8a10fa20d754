"""Model prices (USD per million tokens) from the one ``TERSIFY_MODEL_PRICES`` setting."""

from __future__ import annotations

import structlog

from tersify.settings import ProviderName, Settings

log = structlog.get_logger("tersify.pricing")

_parsed: dict[str, dict[str, tuple[float, float]]] = {}


def parse_prices(spec: str) -> dict[str, tuple[float, float]]:
    """``model=in/out,...`` (USD per million tokens) as a dict; ValueError names a bad entry."""
    prices = {}
    for entry in filter(None, (e.strip() for e in spec.split(","))):
        try:
            model, pair = entry.rsplit("=", 1)
            price_in, price_out = (float(p) for p in pair.split("/"))
        except ValueError:
            raise ValueError(f"bad model price {entry!r}: want model=in/out") from None
        prices[model.strip()] = (price_in, price_out)
    return prices


def prices(settings: Settings) -> dict[str, tuple[float, float]]:
    """The configured prices, parsed once; a bad setting is logged and prices nothing."""
    spec = settings.model_prices
    if spec not in _parsed:
        try:
            _parsed[spec] = parse_prices(spec)
        except ValueError as exc:
            log.error("model_prices_invalid", error=str(exc))
            _parsed[spec] = {}
    return _parsed[spec]


def cost(settings: Settings, model: str, input_tokens: int, output_tokens: int) -> float:
    """USD for these tokens on ``model`` (0 for a model without a price)."""
    price_in, price_out = prices(settings).get(model, (0.0, 0.0))
    return (input_tokens * price_in + output_tokens * price_out) / 1_000_000


def summary_model(settings: Settings) -> str:
    """The model summaries go to (what estimates are priced at)."""
    if settings.resolved_summary_provider() is ProviderName.OPENAI:
        return settings.openai_model
    return settings.anthropic_model
