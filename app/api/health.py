"""``GET /healthz``: the process answers, and what it sees of the database."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError

from app.api.deps import EngineDep, SettingsDep
from app.db.engine import read_server_info
from app.db.queue_health import queue_health

router = APIRouter()


@router.get("/healthz")
def healthz(engine: EngineDep) -> JSONResponse:
    """200 with PostgreSQL and pgvector versions, or 503 when the database is unreachable."""
    try:
        with engine.connect() as conn:
            info = read_server_info(conn)
    except DBAPIError as exc:
        reason = type(exc.orig).__name__ if exc.orig else type(exc).__name__
        return JSONResponse(
            {"status": "error", "database": {"ok": False, "error": reason}}, status_code=503
        )
    ok = info.pgvector_version is not None
    body = {
        "status": "ok" if ok else "degraded",
        "database": {
            "ok": True,
            "postgres": info.server_version,
            "pgvector": info.pgvector_version,
        },
    }
    return JSONResponse(body, status_code=200 if ok else 503)


@router.get("/readyz")
def readyz(engine: EngineDep, settings: SettingsDep) -> JSONResponse:
    """200 when the database answers, some worker sent a heartbeat recently and no runnable
    job has waited longer than ``REVIEWBOT_READY_MAX_JOB_AGE_SECONDS``; else 503 saying why."""
    try:
        with engine.connect() as conn:
            health = queue_health(conn, settings.worker_alive_seconds)
    except DBAPIError as exc:
        reason = type(exc.orig).__name__ if exc.orig else type(exc).__name__
        return JSONResponse({"status": "error", "error": reason}, status_code=503)
    problems = []
    if health.workers_alive == 0:
        problems.append(
            f"no job worker sent a heartbeat in the last {settings.worker_alive_seconds:g} s"
        )
    if health.oldest_runnable_seconds > settings.ready_max_job_age_seconds:
        problems.append(
            f"the oldest runnable job has waited {health.oldest_runnable_seconds:.0f} s"
            f" (limit {settings.ready_max_job_age_seconds:g} s)"
        )
    body = {
        "status": "error" if problems else "ok",
        "workers": health.workers_alive,
        "oldest_runnable_job_seconds": round(health.oldest_runnable_seconds, 1),
        "jobs_stuck_doing": health.stuck_doing,
    }
    if problems:
        body["error"] = "; ".join(problems)
    return JSONResponse(body, status_code=503 if problems else 200)
