"""The ``model_usage`` table: model calls and tokens per day, repository, purpose and
model, written where a model is called and read by the dashboard's spend chart."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import Connection, text

#: What a model call was for.
PURPOSES = ("review", "answer", "summary", "embedding")


@dataclass(frozen=True)
class DailyUsage:
    day: date
    model: str
    calls: int
    input_tokens: int
    output_tokens: int


def record_usage(
    conn: Connection,
    repo_id: int,
    purpose: str,
    model: str | None,
    calls: int,
    input_tokens: int,
    output_tokens: int = 0,
) -> None:
    """Add one run's calls and tokens to today's row; nothing is written when no call
    was made."""
    if purpose not in PURPOSES:
        raise ValueError(f"unknown model purpose {purpose!r}")
    if calls <= 0 or not model:
        return
    conn.execute(
        text(
            "INSERT INTO model_usage (day, repository_id, purpose, model, calls, input_tokens,"
            " output_tokens) VALUES (current_date, :r, :p, :m, :c, :i, :o)"
            " ON CONFLICT (day, repository_id, purpose, model) DO UPDATE SET"
            " calls = model_usage.calls + EXCLUDED.calls,"
            " input_tokens = model_usage.input_tokens + EXCLUDED.input_tokens,"
            " output_tokens = model_usage.output_tokens + EXCLUDED.output_tokens"
        ),
        {"r": repo_id, "p": purpose, "m": model, "c": calls, "i": input_tokens, "o": output_tokens},
    )


def daily_usage(conn: Connection, days: int) -> list[DailyUsage]:
    """Per day and model over the last ``days`` days (today included), all repositories."""
    rows = conn.execute(
        text(
            "SELECT day, model, sum(calls)::bigint AS calls,"
            " sum(input_tokens)::bigint AS input_tokens,"
            " sum(output_tokens)::bigint AS output_tokens FROM model_usage"
            " WHERE day > current_date - CAST(:d AS integer)"
            " GROUP BY day, model ORDER BY day, model"
        ),
        {"d": days},
    )
    return [DailyUsage(r.day, r.model, r.calls, r.input_tokens, r.output_tokens) for r in rows]
