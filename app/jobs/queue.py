"""The procrastinate app: tasks are registered here; connectors are given at start-up.

Workers receive a ``Runtime`` (settings and engine) through procrastinate's
``additional_context``, so tasks read no globals. Tasks are thin: they call the modules
that do the work.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import procrastinate
from procrastinate import JobContext, RetryStrategy
from sqlalchemy import Engine
from sqlalchemy.engine import URL

from app.config import Settings
from app.github.client import GitHubApp
from app.logs import kv

#: 6 attempts over about 2 minutes: 2, 4, 8, 16, 32 s between them.
RETRY = RetryStrategy(max_attempts=6, exponential_wait=2)


@dataclass(frozen=True)
class Runtime:
    """What tasks need: settings, the engine, and one GitHub App client per process."""

    settings: Settings
    engine: Engine

    @cached_property
    def github(self) -> GitHubApp:
        return GitHubApp(self.settings)


log = logging.getLogger(__name__)
queue = procrastinate.App(connector=procrastinate.PsycopgConnector())


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
        "update_heartbeat_interval": max(0.5, stalled / 6),
        "stalled_worker_timeout": stalled,
        "install_signal_handlers": False,
        "delete_jobs": "never",  # finished jobs stay for GET /reindex/{id} and /metrics
    }


async def recover_stalled_jobs(app: procrastinate.App, seconds_since_heartbeat: float) -> int:
    """Put back in the queue the jobs of workers that stopped sending heartbeats (crashed)."""
    stalled = list(
        await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=seconds_since_heartbeat)
    )
    for job in stalled:
        await app.job_manager.retry_job(job)
    return len(stalled)


async def work(app: procrastinate.App, run: Runtime, *, signals: bool = False) -> None:
    """Recover crashed workers' jobs, then process jobs until cancelled (the app is open)."""
    recovered = await recover_stalled_jobs(app, run.settings.stalled_worker_seconds)
    if recovered:
        log.warning(kv("worker.recovered_stalled_jobs", count=recovered))
    options = worker_options(run, run.settings.worker_concurrency)
    options["install_signal_handlers"] = signals
    await app.run_worker_async(**options)
