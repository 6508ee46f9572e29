"""The ``review_feedback`` table: what was learned from reactions and resolved threads,
per repository (``app/review/feedback.py`` says what counts as rejected)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text


@dataclass(frozen=True)
class FeedbackRow:
    """One of the bot's inline comments and what people did with it."""

    pr_number: int
    comment_id: int
    fingerprint: str
    title_key: str
    path: str
    thumbs_up: int
    thumbs_down: int
    resolved: bool
    verdict: str


def record_feedback(conn: Connection, repo_id: int, rows: Sequence[FeedbackRow]) -> None:
    """Insert or refresh (a PR closed, reopened and closed again is read again)."""
    if not rows:
        return
    conn.execute(
        text(
            "INSERT INTO review_feedback (repository_id, pr_number, comment_id, fingerprint,"
            " title_key, path, thumbs_up, thumbs_down, resolved, verdict)"
            " VALUES (:r, :pr_number, :comment_id, :fingerprint, :title_key, :path, :thumbs_up,"
            " :thumbs_down, :resolved, :verdict)"
            " ON CONFLICT (repository_id, comment_id) DO UPDATE SET thumbs_up ="
            " EXCLUDED.thumbs_up, thumbs_down = EXCLUDED.thumbs_down, resolved = EXCLUDED.resolved,"
            " verdict = EXCLUDED.verdict, recorded_at = now()"
        ),
        [{"r": repo_id, **vars(row)} for row in rows],
    )


def rejected_findings(conn: Connection, repo_id: int) -> list[tuple[str, str]]:
    """(fingerprint, title key) of what the repository turned down, for the next review
    to leave out (``app.review.feedback.Rejected.of``)."""
    rows = conn.execute(
        text(
            "SELECT fingerprint, title_key FROM review_feedback"
            " WHERE repository_id = :r AND verdict = 'rejected'"
        ),
        {"r": repo_id},
    )
    return [(str(f), str(t)) for f, t in rows]


def feedback_of(conn: Connection, repo: str) -> list[FeedbackRow]:
    """Everything learned in ``repo``, newest PR first."""
    rows = conn.execute(
        text(
            "SELECT f.pr_number, f.comment_id, f.fingerprint, f.title_key, f.path, f.thumbs_up,"
            " f.thumbs_down, f.resolved, f.verdict FROM review_feedback f"
            " JOIN repositories r ON r.id = f.repository_id WHERE r.full_name = :n"
            " ORDER BY f.pr_number DESC, f.comment_id"
        ),
        {"n": repo},
    )
    return [FeedbackRow(*row) for row in rows]


def forget_feedback(conn: Connection, repo: str) -> int:
    """Clear what was learned in ``repo``; returns how many comments it covered."""
    return int(
        conn.execute(
            text(
                "DELETE FROM review_feedback f USING repositories r"
                " WHERE r.id = f.repository_id AND r.full_name = :n"
            ),
            {"n": repo},
        ).rowcount
    )


def feedback_counts(conn: Connection) -> list[tuple[str, str, int]]:
    """(repository, verdict, comments) for ``/metrics``."""
    rows = conn.execute(
        text(
            "SELECT r.full_name, f.verdict, count(*) FROM review_feedback f"
            " JOIN repositories r ON r.id = f.repository_id GROUP BY 1, 2 ORDER BY 1, 2"
        )
    )
    return [(name, verdict, int(n)) for name, verdict, n in rows]


def feedback_by_prefix(
    conn: Connection, repo_id: int, prefixes: dict[str, str]
) -> dict[str, tuple[int, int]]:
    """For each name, (findings read back, of them rejected) among those whose title key
    begins with its prefix: a tool's findings, by the tool's name in their titles."""
    found = {}
    for name, prefix in prefixes.items():
        row = conn.execute(
            text(
                "SELECT count(*), count(*) FILTER (WHERE verdict = 'rejected')"
                " FROM review_feedback WHERE repository_id = :r AND title_key LIKE :p"
            ),
            {"r": repo_id, "p": prefix.replace("%", "").replace("_", "") + " %"},
        ).one()
        found[name] = (int(row[0]), int(row[1]))
    return found
