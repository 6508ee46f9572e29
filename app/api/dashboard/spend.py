"""Model spend per day, from ``model_usage`` rows and model prices (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from app.db.queries.usage import DailyUsage
from app.llm.prices import estimated_cost


@dataclass(frozen=True)
class SpendDay:
    day: date
    calls: int
    tokens: int
    cost: float  # of the priced models
    unpriced_tokens: int  # tokens of models with no known price


def spend_by_day(
    usage: Sequence[DailyUsage],
    prices: Mapping[str, tuple[float, float]],
    today: date,
    days: int = 14,
) -> list[SpendDay]:
    """One entry per day, oldest first, ending ``today``; days without calls are zero."""
    totals = {today - timedelta(days=n): [0, 0, 0.0, 0] for n in range(days)}
    for u in usage:
        if u.day not in totals:
            continue
        day = totals[u.day]
        tokens = u.input_tokens + u.output_tokens
        day[0] += u.calls
        day[1] += tokens
        cost = estimated_cost(u.model, u.input_tokens, u.output_tokens, prices)
        if cost is None:
            day[3] += tokens
        else:
            day[2] += cost
    return [
        SpendDay(d, int(c), int(t), float(cost), int(unpriced))
        for d, (c, t, cost, unpriced) in sorted(totals.items())
    ]
