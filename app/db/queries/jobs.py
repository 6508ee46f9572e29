"""Reading procrastinate's jobs for the dashboard: counts per status, and pages of jobs
each with its last recorded error.

procrastinate's job manager lists jobs without a limit (``list_jobs`` returns every
matching row) and counts them per queue with a query several times slower than a plain
count per status (``list_queues``; bench/RESULTS.md), which a page view cannot afford;
these read the table directly. Every change of a job's state (retry, cancel)
goes through the job manager (``app/api/dashboard/actions.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, text

from app.db.queries import where

STATUSES = ("todo", "doing", "succeeded", "failed", "cancelled", "aborted")


def job_counts(conn: Connection) -> dict[str, int]:
    """Jobs per status (every status present, zero when none)."""
    counted: dict[str, int] = dict(
        conn.execute(
            text("SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY status")
        ).all()
    )
    return {status: int(counted.get(status, 0)) for status in STATUSES}


@dataclass(frozen=True)
class JobRow:
    id: int
    task: str
    status: str
    args: dict[str, Any]
    attempts: int
    scheduled_at: datetime | None
    queued_at: datetime | None
    stalled: bool  # 'doing' with no live worker behind it
    last_error: str | None


def job_page(
    conn: Connection,
    limit: int,
    *,
    status: str | None = None,
    before_id: int | None = None,
    job_id: int | None = None,
    alive_seconds: float = 60.0,
) -> list[JobRow]:
    """Newest first: ``limit`` jobs older than ``before_id``, of one status or all (or
    the one job ``job_id``). A job is ``stalled`` when it is ``doing`` and its worker
    sent no heartbeat in ``alive_seconds``."""
    filters = where(
        (job_id is not None, "j.id = :i"),
        (status is not None, "j.status = CAST(:s AS procrastinate_job_status)"),
        (before_id is not None, "j.id < :b"),
    )
    rows = conn.execute(
        text(
            "SELECT j.id, j.task_name, j.status::text AS status, j.args, j.attempts,"
            " j.scheduled_at, q.at AS queued_at,"
            " (j.status = 'doing' AND (w.id IS NULL"
            "  OR w.last_heartbeat <= now() - make_interval(secs => :alive))) AS stalled,"
            " e.error AS last_error"
            " FROM procrastinate_jobs j"
            " LEFT JOIN procrastinate_workers w ON w.id = j.worker_id"
            " LEFT JOIN LATERAL (SELECT at FROM procrastinate_events"
            "  WHERE job_id = j.id AND type = 'deferred' ORDER BY id LIMIT 1) q ON TRUE"
            " LEFT JOIN LATERAL (SELECT error FROM job_errors"
            "  WHERE job_id = j.id ORDER BY id DESC LIMIT 1) e ON TRUE"
            f" {filters} ORDER BY j.id DESC LIMIT :n"
        ),
        {"s": status, "b": before_id, "i": job_id, "n": limit, "alive": alive_seconds},
    )
    return [
        JobRow(
            r.id,
            r.task_name,
            r.status,
            dict(r.args),
            r.attempts,
            r.scheduled_at,
            r.queued_at,
            bool(r.stalled),
            r.last_error,
        )
        for r in rows
    ]


def task_counts(conn: Connection) -> list[tuple[str, str, int]]:
    """(task, status, jobs) for every pair present."""
    rows = conn.execute(
        text("SELECT task_name, status::text, count(*) FROM procrastinate_jobs GROUP BY 1, 2")
    )
    return [(str(t), str(s), int(n)) for t, s, n in rows]
