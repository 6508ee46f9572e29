"""What the job queue's tables say about its liveness (for ``/readyz`` and ``/metrics``).

A worker is alive when it sent a heartbeat within ``alive`` seconds and since the
database server started: right after PostgreSQL comes back, a heartbeat from before the
outage says nothing about a worker that may still be stopped, waiting to reconnect."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, text

HEALTH = text(
    """
    SELECT
      (SELECT count(*) FROM procrastinate_workers
        WHERE last_heartbeat > greatest(now() - make_interval(secs => :alive),
                                        pg_postmaster_start_time())) AS workers,
      (SELECT coalesce(extract(epoch FROM now() - min(coalesce(j.scheduled_at, e.at))), 0)
         FROM procrastinate_jobs j
         JOIN procrastinate_events e ON e.job_id = j.id AND e.type = 'deferred'
        WHERE j.status = 'todo' AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
      ) AS oldest,
      (SELECT count(*) FROM procrastinate_jobs j
         LEFT JOIN procrastinate_workers w ON w.id = j.worker_id
        WHERE j.status = 'doing'
          AND (w.id IS NULL OR w.last_heartbeat <= greatest(
                now() - make_interval(secs => :alive), pg_postmaster_start_time()))
      ) AS stuck
    """
)


@dataclass(frozen=True)
class QueueHealth:
    workers_alive: int  # workers whose heartbeat is recent
    oldest_runnable_seconds: float  # how long the oldest job that could run has waited
    stuck_doing: int  # jobs 'doing' whose worker has no recent heartbeat


def queue_health(conn: Connection, alive_seconds: float) -> QueueHealth:
    row = conn.execute(HEALTH, {"alive": alive_seconds}).one()
    return QueueHealth(int(row.workers), float(row.oldest), int(row.stuck))
