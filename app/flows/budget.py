"""Budgets on a pull request's model tokens (``app/review/budget.py`` says which): the
check before a review, a description or an answer, and the one note a PR gets when it
goes over."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from app.db.queries.repositories import repository_id
from app.db.queries.usage import (
    installation_tokens_today,
    pr_tokens,
    record_pr_tokens,
    record_usage,
    set_budget_note,
)
from app.forge.protocol import RepoHost
from app.logs import kv
from app.review.budget import budget_note, exceeded, per_pr_limit
from app.review.config import ReviewConfig
from app.runtime import Runtime

log = logging.getLogger(__name__)


def over_budget(
    run: Runtime,
    api: RepoHost,
    repo: str,
    installation_id: int,
    pr_number: int,
    config: ReviewConfig,
    now: datetime | None = None,
) -> bool:
    """Whether the PR is over a budget; the first time for a budget and period, the note
    saying so is posted."""
    now = now or datetime.now(UTC)
    per_pr = per_pr_limit(config.budget_tokens_per_pr, run.settings.budget_tokens_per_pr)
    per_day = run.settings.budget_tokens_per_day
    if per_pr.tokens is None and per_day is None:
        return False
    with run.engine.begin() as conn:
        repo_id = repository_id(conn, repo, installation_id=installation_id)
        today = installation_tokens_today(conn, installation_id) if per_day is not None else 0
        used, _ = pr_tokens(conn, repo_id, pr_number)
        over = exceeded(today, per_day, used, per_pr, now)
        first = over is not None and set_budget_note(conn, repo_id, pr_number, over.key)
    if over is None:
        return False
    log.info(kv("budget.exceeded", repo=repo, pr=pr_number, budget=over.kind, used=over.used))
    if first:
        api.comment(pr_number, f"{budget_note(over, now)}\n\n<!-- reviewbot:budget={over.key} -->")
    return True


def spend(
    run: Runtime,
    repo: str,
    pr_number: int,
    purpose: str,
    model: str,
    calls: int,
    prompt_tokens: int,
    completion_tokens: int,
) -> None:
    """Record a PR's model use: the day's usage and the PR's total."""
    with run.engine.begin() as conn:
        repo_id = repository_id(conn, repo)
        record_usage(conn, repo_id, purpose, model, calls, prompt_tokens, completion_tokens)
        record_pr_tokens(conn, repo_id, pr_number, prompt_tokens + completion_tokens)
