"""The ``model_usage`` table: model calls and tokens per day, repository, purpose and
model, written where a model is called and read by the dashboard's spend chart."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import Connection, text

#: What a model call was for.
PURPOSES = ("review", "answer", "describe", "summary", "embedding")
#: What a pull request's work costs: what the budgets count.
PR_PURPOSES = ("review", "answer", "describe")
#: Days are UTC days, whatever the database server's time zone.
TODAY = "CAST(now() AT TIME ZONE 'UTC' AS date)"


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
            f" output_tokens) VALUES ({TODAY}, :r, :p, :m, :c, :i, :o)"
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
            f" WHERE day > {TODAY} - CAST(:d AS integer)"
            " GROUP BY day, model ORDER BY day, model"
        ),
        {"d": days},
    )
    return [DailyUsage(r.day, r.model, r.calls, r.input_tokens, r.output_tokens) for r in rows]


def record_pr_tokens(conn: Connection, repo_id: int, pr_number: int, tokens: int) -> None:
    """Add ``tokens`` to what the PR has spent."""
    if tokens <= 0:
        return
    conn.execute(
        text(
            "INSERT INTO pr_usage (repository_id, pr_number, tokens) VALUES (:r, :n, :t)"
            " ON CONFLICT (repository_id, pr_number) DO UPDATE SET"
            " tokens = pr_usage.tokens + EXCLUDED.tokens, updated_at = now()"
        ),
        {"r": repo_id, "n": pr_number, "t": tokens},
    )


def pr_tokens(conn: Connection, repo_id: int, pr_number: int) -> tuple[int, str | None]:
    """(tokens the PR has spent, the budget note last posted on it)."""
    row = conn.execute(
        text(
            "SELECT tokens, budget_note FROM pr_usage WHERE repository_id = :r AND pr_number = :n"
        ),
        {"r": repo_id, "n": pr_number},
    ).one_or_none()
    return (int(row.tokens), row.budget_note) if row is not None else (0, None)


def set_budget_note(conn: Connection, repo_id: int, pr_number: int, note: str) -> bool:
    """Record ``note`` as posted on the PR; False when it already was (post it once)."""
    return bool(
        conn.execute(
            text(
                "INSERT INTO pr_usage (repository_id, pr_number, budget_note) VALUES (:r, :n, :b)"
                " ON CONFLICT (repository_id, pr_number) DO UPDATE SET budget_note = :b"
                " WHERE pr_usage.budget_note IS DISTINCT FROM :b RETURNING 1"
            ),
            {"r": repo_id, "n": pr_number, "b": note},
        ).scalar()
    )


def installation_tokens_today(conn: Connection, installation_id: int) -> int:
    """Tokens the installation's repositories spent on PR work today (UTC)."""
    return int(
        conn.execute(
            text(
                "SELECT coalesce(sum(u.input_tokens + u.output_tokens), 0) FROM model_usage u"
                " JOIN repositories r ON r.id = u.repository_id"
                f" WHERE r.installation_id = :i AND u.day = {TODAY}"
                " AND u.purpose = ANY(CAST(:p AS text[]))"
            ),
            {"i": installation_id, "p": list(PR_PURPOSES)},
        ).scalar_one()
    )


@dataclass(frozen=True)
class InstallationSpend:
    installation_id: int
    tokens_today: int


@dataclass(frozen=True)
class PullRequestSpend:
    repo: str
    pr_number: int
    tokens: int
    budget_note: str | None


def installations_today(conn: Connection) -> list[InstallationSpend]:
    """Each installation's PR work today (UTC), most first."""
    rows = conn.execute(
        text(
            "SELECT r.installation_id, sum(u.input_tokens + u.output_tokens) AS tokens"
            " FROM model_usage u JOIN repositories r ON r.id = u.repository_id"
            f" WHERE u.day = {TODAY} AND u.purpose = ANY(CAST(:p AS text[]))"
            " AND r.installation_id IS NOT NULL"
            " GROUP BY r.installation_id ORDER BY tokens DESC, r.installation_id"
        ),
        {"p": list(PR_PURPOSES)},
    )
    return [InstallationSpend(int(i), int(t)) for i, t in rows]


def top_pull_requests(conn: Connection, limit: int = 10) -> list[PullRequestSpend]:
    """The pull requests that spent the most tokens."""
    rows = conn.execute(
        text(
            "SELECT r.full_name, p.pr_number, p.tokens, p.budget_note FROM pr_usage p"
            " JOIN repositories r ON r.id = p.repository_id"
            " ORDER BY p.tokens DESC, r.full_name, p.pr_number LIMIT :n"
        ),
        {"n": limit},
    )
    return [PullRequestSpend(*row) for row in rows]
