"""Reading the ``reviews`` table for the dashboard: counts, latency and pages of reviews."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, text

from app.db.queries import where


@dataclass(frozen=True)
class ReviewCounts:
    last_day: int
    last_week: int
    median_latency_seconds: float | None  # posted reviews of the last 7 days


@dataclass(frozen=True)
class ReviewRow:
    id: int
    repo: str
    pr_number: int
    head_sha: str
    status: str
    comment_count: int
    latency_seconds: float | None
    model: str | None
    prompt_tokens: int
    completion_tokens: int
    created_at: datetime


def review_counts(conn: Connection) -> ReviewCounts:
    row = conn.execute(
        text(
            "SELECT count(*) FILTER (WHERE created_at > now() - interval '1 day') AS day,"
            " count(*) AS week,"
            " percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM"
            " finished_at - created_at)) FILTER (WHERE status = 'posted'"
            " AND finished_at IS NOT NULL) AS median"
            " FROM reviews WHERE created_at > now() - interval '7 days'"
        )
    ).one()
    median = float(row.median) if row.median is not None else None
    return ReviewCounts(int(row.day), int(row.week), median)


def review_page(
    conn: Connection, limit: int, before_id: int | None = None, repo_id: int | None = None
) -> list[ReviewRow]:
    """Newest first: ``limit`` reviews older than ``before_id``, of one repository or all."""
    filters = where(
        (before_id is not None, "v.id < :b"), (repo_id is not None, "v.repository_id = :r")
    )
    rows = conn.execute(
        text(
            "SELECT v.id, r.full_name AS repo, v.pr_number, v.head_sha, v.status,"
            " v.comment_count, extract(epoch FROM v.finished_at - v.created_at) AS latency,"
            " v.model, v.prompt_tokens, v.completion_tokens, v.created_at"
            " FROM reviews v JOIN repositories r ON r.id = v.repository_id"
            f" {filters} ORDER BY v.id DESC LIMIT :n"
        ),
        {"b": before_id, "r": repo_id, "n": limit},
    )
    return [
        ReviewRow(
            r.id,
            r.repo,
            r.pr_number,
            r.head_sha,
            r.status,
            r.comment_count,
            float(r.latency) if r.latency is not None else None,
            r.model,
            r.prompt_tokens,
            r.completion_tokens,
            r.created_at,
        )
        for r in rows
    ]
