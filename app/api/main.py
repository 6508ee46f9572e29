"""Build the FastAPI app. No I/O here: the caller opens the database and passes the engine."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from sqlalchemy import Engine
from sqlalchemy.engine import URL

from app import __version__
from app.api import admin, gitlab_webhooks, health, metrics, webhooks
from app.api.dashboard.mount import install as install_dashboard
from app.api.intake import Intake
from app.config import Settings
from app.forge.spool import Spool
from app.gitlab.instances import instance_settings
from app.jobs import tasks as _tasks  # noqa: F401 (registers the tasks)
from app.jobs.queue import opened_queue, work
from app.logs import kv
from app.runtime import Runtime

log = logging.getLogger(__name__)


def create_app(
    settings: Settings, engine: Engine, *, worker: bool = False, queue_url: URL | None = None
) -> FastAPI:
    """The reviewbot HTTP API over a checked, migrated database; the job queue lives in the
    same database (``queue_url``, default the engine's) and is opened with the app. With
    ``worker``, jobs also run in this process."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with opened_queue(queue_url or engine.url) as queue:
            app.state.queue = queue
            app.state.intake = Intake(queue, app.state.spool)
            running = [asyncio.create_task(app.state.intake.drain())]
            if worker:
                running.append(asyncio.create_task(work(queue, Runtime(settings, engine))))
            try:
                yield
            finally:
                for task in running:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task

    app = FastAPI(
        title="reviewbot", version=__version__, docs_url=None, redoc_url=None, lifespan=lifespan
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.spool = Spool(settings.data_dir / "spool", settings.spool_max_bytes)
    app.include_router(health.router)
    app.include_router(webhooks.router)
    app.include_router(gitlab_webhooks.router)
    app.include_router(admin.router)
    app.include_router(metrics.router)
    install_dashboard(app)
    # the GitLab instances deliveries may come from, once (ConfigError here, at start, for
    # an instance given twice)
    gitlab = [v for v in instance_settings(settings) if v.gitlab_webhook_secret is not None]
    app.state.gitlab_instances = gitlab
    if settings.github_webhook_secret is None and not gitlab:
        log.error(kv("webhooks.disabled", reason=webhooks.DISABLED))
    return app
