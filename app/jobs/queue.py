"""The procrastinate app: tasks are registered here; connectors are given at start-up.

Workers receive a ``Runtime`` (settings and engine) through procrastinate's
``additional_context``, so tasks read no globals. Tasks are thin: they call the modules
that do the work.

Liveness rules (the README's job table):

- Putting a job back in the queue (a retry, or recovery after its worker died) never
  fails on the job's queueing lock: a conflict means a newer job for the same work is
  waiting (a newer head of the PR, a newer push), so the older job is *superseded*: it
  ends ``cancelled`` and the newer one does the work.
- ``work`` supervises procrastinate's worker: whatever stops it (a database outage kills
  its listener) it is started again with backoff, until the task is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import procrastinate
from procrastinate import JobContext
from procrastinate.exceptions import AlreadyEnqueued, UniqueViolation
from procrastinate.jobs import Job
from procrastinate.manager import JobManager
from sqlalchemy.engine import URL

from app.jobs.heartbeat import touch_heartbeat
from app.jobs.retry import RetryByErrorKind
from app.logs import kv
from app.runtime import Runtime

#: At most 6 runs over about a minute (2, 4, 8, 16, 32 s between them), for transient
#: failures only; a permanent one fails at once.
RETRY = RetryByErrorKind(max_attempts=6, base_seconds=2)
QUEUEING_LOCK_INDEX = "procrastinate_jobs_queueing_lock_idx_v1"
SUPERSEDE = (
    "UPDATE procrastinate_jobs SET status = 'cancelled', attempts = attempts + 1"
    " WHERE id = %(job_id)s AND status IN ('doing', 'failed')"
)
#: A supervised worker that ran this long is healthy again: its backoff starts over.
HEALTHY_RUN_SECONDS = 60.0
MAX_RESTART_DELAY = 10.0


log = logging.getLogger(__name__)


class SupersedingJobManager(JobManager):
    """procrastinate's job manager, except that a job put back in the queue while a newer
    job holds its queueing lock is superseded (``cancelled``) instead of raising; and each
    heartbeat this process's worker writes to the database also touches
    ``heartbeat_file`` (set by ``work``), which ``reviewbot healthcheck`` reads."""

    heartbeat_file: Path | None = None

    async def register_worker(self) -> int:
        worker_id = await super().register_worker()
        self._beat()
        return worker_id

    async def update_heartbeat(self, worker_id: int) -> None:
        await super().update_heartbeat(worker_id)
        self._beat()

    def _beat(self) -> None:
        if self.heartbeat_file is not None:
            touch_heartbeat(self.heartbeat_file)

    async def retry_job(
        self,
        job: Job,
        retry_at: Any = None,
        priority: int | None = None,
        queue: str | None = None,
        lock: str | None = None,
    ) -> None:
        try:
            await super().retry_job(job, retry_at, priority, queue, lock)
        except UniqueViolation as exc:
            if exc.constraint_name != QUEUEING_LOCK_INDEX:
                raise
            await self.connector.execute_query_async(SUPERSEDE, job_id=job.id)
            log.warning(
                kv(
                    "job.superseded",
                    job_id=job.id,
                    task=job.task_name,
                    queueing_lock=job.queueing_lock,
                )
            )


queue = procrastinate.App(connector=procrastinate.PsycopgConnector())
# Before any task is registered: tasks keep a reference to the app's job manager.
queue.job_manager = SupersedingJobManager(queue.connector)


def conninfo(url: URL) -> str:
    """A libpq connection string for procrastinate's psycopg pool."""
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


@asynccontextmanager
async def opened_queue(url: URL) -> AsyncIterator[procrastinate.App]:
    """The task app connected to the database at ``url``, open for deferring and working.

    The connector is swapped in for the block only, so nothing global outlives it.
    """
    with queue.replace_connector(procrastinate.PsycopgConnector(conninfo=conninfo(url))):
        async with queue.open_async():
            yield queue


def runtime(context: JobContext) -> Runtime:
    found: Any = context.additional_context.get("runtime")
    assert isinstance(found, Runtime), "workers are started with a Runtime in additional_context"
    return found


def worker_options(run: Runtime, concurrency: int = 2) -> dict[str, Any]:
    stalled = run.settings.stalled_worker_seconds
    return {
        "additional_context": {"runtime": run},
        "concurrency": concurrency,
        "update_heartbeat_interval": run.settings.heartbeat_interval_seconds,
        "stalled_worker_timeout": stalled,
        "install_signal_handlers": False,
        "delete_jobs": "never",  # finished jobs stay for GET /reindex/{id} and /metrics
    }


async def recover_stalled_jobs(app: procrastinate.App, seconds_since_heartbeat: float) -> int:
    """Put back in the queue the jobs of workers that stopped sending heartbeats (crashed).

    One job that cannot be put back is logged and skipped; it never stops the others.
    """
    stalled = list(
        await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=seconds_since_heartbeat)
    )
    recovered = 0
    for job in stalled:
        try:
            await app.job_manager.retry_job(job)
            recovered += 1
        except Exception as exc:
            log.error(
                kv("worker.recover_failed", job_id=job.id, error=type(exc).__name__),
                exc_info=exc,
            )
    return recovered


async def _defer_once(app: procrastinate.App, task: str) -> None:
    """Queue a periodic task now too (at start-up, after an outage), unless it waits."""
    with contextlib.suppress(AlreadyEnqueued):
        await app.configure_task(task, queueing_lock=task).defer_async(timestamp=0)


async def work(app: procrastinate.App, run: Runtime) -> None:
    """Process jobs until cancelled (the app is open), supervising procrastinate's worker.

    Each (re)start first recovers crashed workers' jobs and queues a look for webhook
    deliveries missed while no worker ran. Whatever stops the worker (a
    database outage ends its listener; an error escapes) it is started again after a
    backoff of 1, 2, 4 ... 10 s, reset after a healthy run. Only cancellation ends it.
    """
    delay = 1.0
    options = worker_options(run, run.settings.worker_concurrency)
    if isinstance(app.job_manager, SupersedingJobManager):  # this process's one worker
        app.job_manager.heartbeat_file = run.settings.heartbeat_file
    while True:
        started = time.monotonic()
        try:
            recovered = await recover_stalled_jobs(app, run.settings.stalled_worker_seconds)
            if recovered:
                log.warning(kv("worker.recovered_stalled_jobs", count=recovered))
            await _defer_once(app, "recover_missed_deliveries")
            await app.run_worker_async(**options)
            log.error(kv("worker.stopped", restart_in=delay))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error(
                kv("worker.crashed", error=type(exc).__name__, restart_in=delay), exc_info=exc
            )
        if time.monotonic() - started > HEALTHY_RUN_SECONDS:
            delay = 1.0
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_RESTART_DELAY)


async def work_until_signalled(url: URL, run: Runtime) -> None:
    """Open the queue at ``url`` and work until SIGTERM or SIGINT (``reviewbot worker``)."""
    async with opened_queue(url) as app:
        running = asyncio.current_task()
        assert running is not None
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, running.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await work(app, run)
