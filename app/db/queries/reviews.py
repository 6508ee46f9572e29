"""Reading the ``reviews`` table for the dashboard: counts, latency and pages of reviews."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import Connection, text

from app.db.queries import where


class ReviewStatus(StrEnum):
    """Where the review of one head stands (stored as its text)."""

    POSTING = "posting"  # claimed: being written, or to be reconciled by a retry
    POSTED = "posted"
    FAILED = "failed"  # the model did not follow the format: nothing was posted
    SKIPPED = "skipped"  # no model to write it


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


def posted_latencies(conn: Connection) -> list[float]:
    """Seconds from intent to posted review, for every posted review (the latency the
    dashboard shows too)."""
    return [
        float(s)
        for s in conn.execute(
            text(
                "SELECT extract(epoch FROM finished_at - created_at) FROM reviews"
                " WHERE status = 'posted' AND finished_at IS NOT NULL"
            )
        ).scalars()
    ]


# -- the review flow's bookkeeping (app/flows/review.py) --------------------------------


def review_status(conn: Connection, repo_id: int, pr_number: int, head: str) -> ReviewStatus | None:
    found = conn.execute(
        text(
            "SELECT status FROM reviews"
            " WHERE repository_id = :r AND pr_number = :p AND head_sha = :h"
        ),
        {"r": repo_id, "p": pr_number, "h": head},
    ).scalar()
    return ReviewStatus(found) if found is not None else None


def last_posted_head(conn: Connection, repo_id: int, pr_number: int, besides: str) -> str | None:
    """The head of the PR's newest posted review other than ``besides``."""
    found = conn.execute(
        text(
            "SELECT head_sha FROM reviews WHERE repository_id = :r AND pr_number = :p"
            " AND status = 'posted' AND head_sha <> :h ORDER BY updated_at DESC LIMIT 1"
        ),
        {"r": repo_id, "p": pr_number, "h": besides},
    ).scalar()
    return str(found) if found is not None else None


def posted_fingerprints(conn: Connection, repo_id: int, pr_number: int) -> list[str]:
    """Fingerprints of every comment already posted on the PR."""
    found = conn.execute(
        text(
            "SELECT coalesce(array_agg(f), '{}') FROM reviews, unnest(comment_fingerprints) f"
            " WHERE repository_id = :r AND pr_number = :p"
        ),
        {"r": repo_id, "p": pr_number},
    ).scalar_one()
    return list(found)


def claim_review(conn: Connection, repo_id: int, pr_number: int, base: str, head: str) -> None:
    """Record the intent to review ``head`` (status ``posting``)."""
    conn.execute(
        text(
            "INSERT INTO reviews (repository_id, pr_number, base_sha, head_sha, status)"
            " VALUES (:r, :p, :b, :h, 'posting')"
            " ON CONFLICT (repository_id, pr_number, head_sha)"
            " DO UPDATE SET status = 'posting', updated_at = now()"
        ),
        {"r": repo_id, "p": pr_number, "b": base, "h": head},
    )


def reopen_review(conn: Connection, repo_id: int, pr_number: int, head: str) -> None:
    """Set the review of ``head`` back to ``posting``: its check could not be finished,
    and the job's retry reconciles it with what the host has and finishes the check."""
    conn.execute(
        text(
            "UPDATE reviews SET status = 'posting', updated_at = now()"
            " WHERE repository_id = :r AND pr_number = :p AND head_sha = :h"
        ),
        {"r": repo_id, "p": pr_number, "h": head},
    )


def finish_review(
    conn: Connection,
    repo_id: int,
    pr_number: int,
    head: str,
    status: ReviewStatus,
    review_id: int | None,
    fingerprints: list[str],
) -> None:
    conn.execute(
        text(
            "UPDATE reviews SET status = :s, host_review_id = coalesce(:g, host_review_id),"
            " comment_fingerprints = :f, comment_count = :n, updated_at = now(),"
            " finished_at = now() WHERE repository_id = :r AND pr_number = :p AND head_sha = :h"
        ),
        {
            "s": status,
            "g": review_id,
            "f": fingerprints,
            "n": len(fingerprints),
            "r": repo_id,
            "p": pr_number,
            "h": head,
        },
    )


def add_review_tokens(
    conn: Connection,
    repo_id: int,
    pr_number: int,
    head: str,
    model: str,
    prompt_tokens: int,
    completion_tokens: int,
) -> None:
    conn.execute(
        text(
            "UPDATE reviews SET model = :m, prompt_tokens = prompt_tokens + :pt,"
            " completion_tokens = completion_tokens + :ct"
            " WHERE repository_id = :r AND pr_number = :p AND head_sha = :h"
        ),
        {
            "m": model,
            "pt": prompt_tokens,
            "ct": completion_tokens,
            "r": repo_id,
            "p": pr_number,
            "h": head,
        },
    )


def forget_reviews(conn: Connection, repo_id: int, pr_number: int) -> None:
    """Drop what is recorded of the PR's reviews (the CI mode rebuilds it from the host)."""
    conn.execute(
        text("DELETE FROM reviews WHERE repository_id = :r AND pr_number = :p"),
        {"r": repo_id, "p": pr_number},
    )
