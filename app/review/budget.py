"""Budgets and the cost shown on the PR. Pure.

Two budgets count the model tokens (prompt and completion) of a PR's work (reviews,
answers, descriptions): ``REVIEWBOT_BUDGET_TOKENS_PER_DAY`` for all of an installation's
repositories in one UTC day, and ``budget_tokens_per_pr`` (``.reviewbot.toml``, default
``REVIEWBOT_BUDGET_TOKENS_PER_PR``) for one PR in all. Over either, the bot posts one
short note saying which and when it resets, and does nothing more for that PR until
then; ``/review`` by an admin of the repository goes ahead once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.llm.prices import estimated_cost

#: Where each budget's limit can come from, as the note names it.
FROM_FILE = "`budget_tokens_per_pr` in this repository's `.reviewbot.toml`"
FROM_ENV_PR = "`REVIEWBOT_BUDGET_TOKENS_PER_PR`, the deployment's setting"
FROM_ENV_DAY = "`REVIEWBOT_BUDGET_TOKENS_PER_DAY`, the deployment's setting"


@dataclass(frozen=True)
class Limit:
    """A budget's limit (None: no budget) and where it was set."""

    tokens: int | None
    source: str


def per_pr_limit(from_file: int | None, from_environment: int | None) -> Limit:
    """The repository's file wins over the deployment's setting."""
    if from_file is not None:
        return Limit(from_file, FROM_FILE)
    return Limit(from_environment, FROM_ENV_PR)


@dataclass(frozen=True)
class Exceeded:
    kind: str  # "day" | "pr"
    limit: int
    used: int
    period: str  # what the note is about: the UTC day, or "pr"
    source: str = FROM_ENV_DAY  # where the limit was set, as the note names it

    @property
    def key(self) -> str:
        """What a note is posted once for: the budget and its period."""
        return f"{self.kind}:{self.period}"


def exceeded(
    used_today: int,
    per_day: int | None,
    used_by_pr: int,
    per_pr: Limit,
    now: datetime,
) -> Exceeded | None:
    """The budget the PR is over (the day's first), or None."""
    if per_day is not None and used_today >= per_day:
        return Exceeded("day", per_day, used_today, now.astimezone(UTC).date().isoformat())
    if per_pr.tokens is not None and used_by_pr >= per_pr.tokens:
        return Exceeded("pr", per_pr.tokens, used_by_pr, "pr", per_pr.source)
    return None


def budget_note(over: Exceeded, now: datetime) -> str:
    """The one note a PR gets when it goes over a budget."""
    if over.kind == "day":
        midnight = datetime.combine(
            now.astimezone(UTC).date() + timedelta(days=1), datetime.min.time(), UTC
        )
        hours = max(1, round((midnight - now).total_seconds() / 3600))
        return (
            f"reviewbot has used this installation's daily budget of {over.limit:,} model"
            f" tokens ({over.used:,} today; the limit is {over.source}). It resets at"
            f" 00:00 UTC, in about {hours} h; until then this PR gets no reviews, descriptions"
            " or answers. `/review` by a repository admin reviews once anyway."
        )
    return (
        f"reviewbot has used this PR's budget of {over.limit:,} model tokens ({over.used:,};"
        f" the limit is {over.source}). It does not reset: raise the budget for more"
        " reviews, descriptions or answers here. `/review` by a repository admin reviews"
        " once anyway."
    )


def cost_line(
    model: str,
    input_tokens: int,
    output_tokens: int,
    prices: Mapping[str, tuple[float, float]],
    calls: int = 1,
) -> str:
    """What one review or answer cost, for the end of what the bot posts."""
    dollars = estimated_cost(model, input_tokens, output_tokens, prices)
    price = f", about ${dollars:.4f}" if dollars is not None else " (no price known for it)"
    made = f" in {calls} calls" if calls > 1 else ""
    return (
        f"{input_tokens:,} prompt and {output_tokens:,} completion tokens of `{model}`{made}"
        f"{price}."
    )
