"""The dashboard's forms (POST, CSRF-checked): re-index a repository, retry or cancel a
job. Each answers with a redirect (303) to the page it came from, carrying a notice."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from procrastinate.exceptions import ConnectorException, UniqueViolation
from procrastinate.jobs import Status
from sqlalchemy import Engine

from app.api.admin import defer_index
from app.api.dashboard.guard import FormDep
from app.api.dashboard.web import redirect
from app.api.deps import EngineDep, SettingsDep
from app.db.queries.jobs import JobRow, job_page
from app.db.queries.repositories import repository
from app.logs import kv

log = logging.getLogger(__name__)
router = APIRouter(prefix="/admin")


@router.post("/repositories/{repo_id}/reindex")
async def reindex(request: Request, repo_id: int, form: FormDep, engine: EngineDep) -> Response:
    def find() -> tuple[str, int | None] | None:
        with engine.connect() as conn:
            repo = repository(conn, repo_id)
        return (repo.full_name, repo.installation_id) if repo else None

    found = await run_in_threadpool(find)
    if found is None:
        return redirect("/admin/repositories")
    name, installation_id = found
    back = f"/admin/repositories/{repo_id}"
    if installation_id is None:
        return redirect(f"{back}?notice=no-installation")
    full = form.get("full") == "1"
    queued = await defer_index(request.app.state.queue, engine, name, installation_id, full)
    _log("admin.reindex", job_id=queued.job_id, repo=name, full=full)
    return redirect(f"{back}?notice={'already-queued' if queued.already_queued else 'queued'}")


@router.post("/jobs/{job_id}/retry")
async def retry(
    request: Request, job_id: int, form: FormDep, engine: EngineDep, settings: SettingsDep
) -> Response:
    """Queue a failed job, or a stuck one (``doing`` with no live worker), again now."""
    job = await run_in_threadpool(_job, engine, job_id, settings.stalled_worker_seconds)
    if job is None or not (job.status == "failed" or job.stalled):
        return redirect("/admin/jobs?notice=not-allowed")
    manager = request.app.state.queue.job_manager
    try:
        await manager.retry_job_by_id_async(job_id, retry_at=datetime.now(UTC))
    except UniqueViolation:  # its queueing lock: a newer job for the same work waits
        return redirect("/admin/jobs?notice=superseded")
    except ConnectorException:  # its state changed since it was read
        return redirect("/admin/jobs?notice=not-allowed")
    _log("admin.job_retried", job_id=job_id, task=job.task)
    return redirect("/admin/jobs?notice=retried")


@router.post("/jobs/{job_id}/cancel")
async def cancel(
    request: Request, job_id: int, form: FormDep, engine: EngineDep, settings: SettingsDep
) -> Response:
    """Cancel a waiting job, or end a stuck one as ``aborted``."""
    job = await run_in_threadpool(_job, engine, job_id, settings.stalled_worker_seconds)
    manager = request.app.state.queue.job_manager
    if job is not None and job.status == "todo":
        done = await manager.cancel_job_by_id_async(job_id)
    elif job is not None and job.stalled:
        try:
            await manager.finish_job_by_id_async(job_id, Status.ABORTED, delete_job=False)
            done = True
        except ConnectorException:
            done = False
    else:
        done = False
    if not done:
        return redirect("/admin/jobs?notice=not-allowed")
    _log("admin.job_cancelled", job_id=job_id, task=job.task if job else None)
    return redirect("/admin/jobs?notice=cancelled")


def _job(engine: Engine, job_id: int, alive_seconds: float) -> JobRow | None:
    with engine.connect() as conn:
        rows = job_page(conn, 1, job_id=job_id, alive_seconds=alive_seconds)
    return rows[0] if rows else None


def _log(action: str, **fields: object) -> None:
    log.info(kv(action, **fields))
