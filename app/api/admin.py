"""``POST /reindex`` and ``GET /reindex/{job_id}``: admin-only, bearer token."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated, Any

import procrastinate
from fastapi import APIRouter, Depends, Header, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from procrastinate.exceptions import AlreadyEnqueued
from pydantic import BaseModel, Field
from sqlalchemy import Engine

from app.api.deps import EngineDep, SettingsDep
from app.db.queries.index_runs import last_index_stats
from app.db.queries.job_errors import JobErrorRow, last_job_error
from app.db.queries.repositories import installation_of
from app.task_specs import index_job

router = APIRouter()
DISABLED = "admin endpoints are disabled: set REVIEWBOT_ADMIN_TOKEN"


def require_admin(
    settings: SettingsDep, authorization: Annotated[str | None, Header()] = None
) -> None:
    """401 without a bearer token, 403 with a wrong one (compared in constant time)."""
    if settings.admin_token is None:
        raise HTTPException(503, DISABLED)
    if not authorization or not authorization.startswith("Bearer "):
        raise HTTPException(401, "missing bearer token", headers={"WWW-Authenticate": "Bearer"})
    given = authorization.removeprefix("Bearer ").encode()
    if not hmac.compare_digest(given, settings.admin_token.get_secret_value().encode()):
        raise HTTPException(403, "wrong admin token")


AdminDep = Annotated[None, Depends(require_admin)]


class ReindexRequest(BaseModel):
    repo: str = Field(
        pattern=r"^[^/\s]+(/[^/\s]+)+$",
        description="owner/name on GitHub, instance/group/project on GitLab",
    )
    full: bool = False


@router.post("/reindex", status_code=202)
async def reindex(
    body: ReindexRequest, request: Request, engine: EngineDep, _: AdminDep
) -> dict[str, Any]:
    installation_id = await run_in_threadpool(_installation_of, engine, body.repo)
    if installation_id is None:
        raise HTTPException(404, f"unknown repository {body.repo}")
    queued = await defer_index(
        request.app.state.queue, engine, body.repo, installation_id, body.full
    )
    return {"job_id": queued.job_id, "repo": body.repo, "full": body.full}


@dataclass(frozen=True)
class QueuedIndex:
    job_id: int | None
    already_queued: bool  # an index job of the repository was waiting; it is that one


async def defer_index(
    queue: procrastinate.App, engine: Engine, repo: str, installation_id: int, full: bool
) -> QueuedIndex:
    """Queue an index job of ``repo``, or find the one already waiting (the queueing lock
    keeps one per repository). ``POST /reindex`` and the dashboard's button share it."""
    job = index_job(repo, installation_id, full=full)
    task = queue.configure_task(job.task, queueing_lock=job.queueing_lock, lock=job.lock)
    try:
        return QueuedIndex(await task.defer_async(**job.args), False)
    except AlreadyEnqueued:
        waiting = list(
            await queue.job_manager.list_jobs_async(queueing_lock=job.queueing_lock, status="todo")
        )
        return QueuedIndex(waiting[0].id if waiting else None, True)


@router.get("/reindex/{job_id}")
async def reindex_status(
    job_id: int, request: Request, engine: EngineDep, _: AdminDep
) -> dict[str, Any]:
    manager = request.app.state.queue.job_manager
    found = list(await manager.list_jobs_async(id=job_id, task="index_repository"))
    if not found:
        raise HTTPException(404, f"no reindex job {job_id}")
    job = found[0]
    repo = str(job.task_kwargs["repo"])

    def read() -> tuple[dict[str, Any] | None, JobErrorRow | None]:
        with engine.connect() as conn:
            return last_index_stats(conn, repo), last_job_error(conn, job_id)

    stats, error = await run_in_threadpool(read)
    return {
        "job_id": job.id,
        "status": str(job.status),
        "attempts": job.attempts,
        "repo": repo,
        "last_index": stats if job.status == "succeeded" else None,
        "last_error": error.error if error else None,
        "last_error_transient": error.transient if error else None,
    }


def _installation_of(engine: Engine, repo: str) -> int | None:
    with engine.connect() as conn:
        return installation_of(conn, repo)
