"""``POST /reindex`` and ``GET /reindex/{job_id}``: admin-only, bearer token."""

from __future__ import annotations

import hmac
import json
from dataclasses import dataclass
from typing import Annotated, Any

import procrastinate
from fastapi import APIRouter, Depends, Header, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from procrastinate.exceptions import AlreadyEnqueued
from pydantic import BaseModel, Field
from sqlalchemy import Engine, text

from app.api.deps import EngineDep, SettingsDep
from app.github.events import index_job

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
    repo: str = Field(pattern=r"^[^/\s]+/[^/\s]+$", description="owner/name")
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
        found = await run_in_threadpool(_queued_job, engine, job.queueing_lock or "")
        return QueuedIndex(found, True)


@router.get("/reindex/{job_id}")
def reindex_status(job_id: int, engine: EngineDep, _: AdminDep) -> dict[str, Any]:
    with engine.connect() as conn:
        job = conn.execute(
            text(
                "SELECT id, status, attempts, args FROM procrastinate_jobs"
                " WHERE id = :i AND task_name = 'index_repository'"
            ),
            {"i": job_id},
        ).one_or_none()
        if job is None:
            raise HTTPException(404, f"no reindex job {job_id}")
        args = job.args if isinstance(job.args, dict) else json.loads(job.args)
        run = conn.execute(
            text(
                "SELECT r.stats FROM index_runs r JOIN repositories p ON p.id = r.repository_id"
                " WHERE p.full_name = :n ORDER BY r.id DESC LIMIT 1"
            ),
            {"n": args["repo"]},
        ).scalar()
        error = conn.execute(
            text(
                "SELECT error, transient FROM job_errors WHERE job_id = :i ORDER BY id DESC LIMIT 1"
            ),
            {"i": job_id},
        ).one_or_none()
    return {
        "job_id": job.id,
        "status": str(job.status),
        "attempts": job.attempts,
        "repo": args["repo"],
        "last_index": run if job.status == "succeeded" else None,
        "last_error": error.error if error else None,
        "last_error_transient": error.transient if error else None,
    }


def _installation_of(engine: Engine, repo: str) -> int | None:
    with engine.connect() as conn:
        found = conn.execute(
            text("SELECT installation_id FROM repositories WHERE full_name = :n"), {"n": repo}
        ).scalar()
    return int(found) if found is not None else None


def _queued_job(engine: Engine, lock: str) -> int | None:
    with engine.connect() as conn:
        found = conn.execute(
            text("SELECT id FROM procrastinate_jobs WHERE queueing_lock = :l AND status = 'todo'"),
            {"l": lock},
        ).scalar()
    return int(found) if found is not None else None
