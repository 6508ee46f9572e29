"""``GET /healthz``: the process answers, and what it sees of the database."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.api.deps import EngineDep
from app.db.engine import read_server_info

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
def readyz(engine: EngineDep) -> JSONResponse:
    """200 when the database and the job queue's tables answer, else 503."""
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1 FROM procrastinate_jobs LIMIT 1"))
    except DBAPIError as exc:
        reason = type(exc.orig).__name__ if exc.orig else type(exc).__name__
        return JSONResponse({"status": "error", "error": reason}, status_code=503)
    return JSONResponse({"status": "ok"})
