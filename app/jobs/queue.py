"""The procrastinate app: tasks are registered here; connectors are given at start-up.

Workers receive a ``Runtime`` (settings and engine) through procrastinate's
``additional_context``, so tasks read no globals. Tasks are thin: they call the modules
that do the work.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import procrastinate
from procrastinate import JobContext, RetryStrategy
from sqlalchemy import Engine
from sqlalchemy.engine import URL

from app.config import Settings
from app.github.client import GitHubApp

#: 6 attempts over about 2 minutes: 2, 4, 8, 16, 32 s between them.
RETRY = RetryStrategy(max_attempts=6, exponential_wait=2)
STALLED_WORKER_SECONDS = 60


@dataclass(frozen=True)
class Runtime:
    """What tasks need: settings, the engine, and one GitHub App client per process."""

    settings: Settings
    engine: Engine

    @cached_property
    def github(self) -> GitHubApp:
        return GitHubApp(self.settings)


queue = procrastinate.App(connector=procrastinate.PsycopgConnector())


def conninfo(url: URL) -> str:
    """A libpq connection string for procrastinate's psycopg pool."""
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def queue_for(url: URL) -> procrastinate.App:
    """The task app bound to the database at ``url`` (open it before use)."""
    return queue.with_connector(procrastinate.PsycopgConnector(conninfo=conninfo(url)))


def runtime(context: JobContext) -> Runtime:
    found: Any = context.additional_context.get("runtime")
    assert isinstance(found, Runtime), "workers are started with a Runtime in additional_context"
    return found


def worker_options(run: Runtime, concurrency: int = 2) -> dict[str, Any]:
    return {
        "additional_context": {"runtime": run},
        "concurrency": concurrency,
        "update_heartbeat_interval": 10.0,
        "stalled_worker_timeout": float(STALLED_WORKER_SECONDS),
        "install_signal_handlers": False,
        "delete_jobs": "successful",
    }
