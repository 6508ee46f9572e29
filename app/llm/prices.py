"""What model tokens cost: US dollars per million input and output tokens.

The table holds OpenAI's list prices for the models reviewbot names by default
(2026-12); ``REVIEWBOT_MODEL_PRICES`` replaces or extends it for other models and other
providers. A model missing from the table has no estimated cost, which the dashboard
shows as unknown rather than as free.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.config import Settings

#: model -> (USD per 1M input tokens, USD per 1M output tokens)
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
}


def estimated_cost(
    model: str, input_tokens: int, output_tokens: int, prices: Mapping[str, tuple[float, float]]
) -> float | None:
    """Dollars for these tokens of ``model``, or None when its price is not known."""
    price = prices.get(model)
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def model_prices(settings: Settings) -> dict[str, tuple[float, float]]:
    """The built-in table with ``REVIEWBOT_MODEL_PRICES`` over it."""
    return DEFAULT_PRICES | settings.model_prices
