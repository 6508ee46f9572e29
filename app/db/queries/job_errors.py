"""The ``job_errors`` table: why each failed run of a job failed (``GET /reindex/{id}``,
the dashboard's jobs page)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, text


@dataclass(frozen=True)
class JobErrorRow:
    error: str
    transient: bool


def record_job_error(
    conn: Connection, job_id: int | None, task: str, attempt: int, transient: bool, error: str
) -> None:
    conn.execute(
        text(
            "INSERT INTO job_errors (job_id, task, attempt, transient, error)"
            " VALUES (:j, :t, :a, :tr, :e)"
        ),
        {"j": job_id, "t": task, "a": attempt, "tr": transient, "e": error},
    )


def last_job_error(conn: Connection, job_id: int) -> JobErrorRow | None:
    row = conn.execute(
        text("SELECT error, transient FROM job_errors WHERE job_id = :i ORDER BY id DESC LIMIT 1"),
        {"i": job_id},
    ).one_or_none()
    return JobErrorRow(row.error, row.transient) if row else None


def prune_job_errors(conn: Connection, older_than_hours: float) -> None:
    conn.execute(
        text("DELETE FROM job_errors WHERE created_at < now() - make_interval(hours => :h)"),
        {"h": older_than_hours},
    )
