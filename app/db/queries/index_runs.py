"""Reading ``index_runs`` for the dashboard: a repository's run history and what its
last run skipped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, text

from app.db.queries import where

#: The columns of an ``index_runs`` row (alias ``i``) that ``index_run_row`` reads.
RUN_COLUMNS = (
    "i.id AS run_id, i.status AS run_status, i.full AS run_full, i.commit_sha AS run_commit,"
    " i.started_at AS run_started_at, i.wall_seconds AS run_wall_seconds,"
    " i.error AS run_error, i.stats->'files' AS run_files, i.stats->'chunks' AS run_chunks"
)


@dataclass(frozen=True)
class IndexRunRow:
    id: int
    status: str
    full: bool
    commit_sha: str | None
    started_at: datetime
    wall_seconds: float | None
    error: str | None
    files_changed: int
    files_deleted: int
    chunks_added: int
    chunks_updated: int
    chunks_deleted: int
    skipped: dict[str, int]  # reason -> files


def index_run_row(row: Mapping[Any, Any]) -> IndexRunRow:
    files: Mapping[str, Any] = row["run_files"] or {}
    chunks: Mapping[str, Any] = row["run_chunks"] or {}
    return IndexRunRow(
        id=row["run_id"],
        status=row["run_status"],
        full=row["run_full"],
        commit_sha=row["run_commit"],
        started_at=row["run_started_at"],
        wall_seconds=row["run_wall_seconds"],
        error=row["run_error"],
        files_changed=int(files.get("changed", 0)),
        files_deleted=int(files.get("deleted", 0)),
        chunks_added=int(chunks.get("added", 0)),
        chunks_updated=int(chunks.get("updated", 0)),
        chunks_deleted=int(chunks.get("deleted", 0)),
        skipped={str(k): int(v) for k, v in (files.get("skipped") or {}).items()},
    )


def index_run_page(
    conn: Connection, repo_id: int, limit: int, before_id: int | None = None
) -> list[IndexRunRow]:
    """Newest first: ``limit`` runs of one repository older than ``before_id``."""
    filters = where((True, "i.repository_id = :r"), (before_id is not None, "i.id < :b"))
    rows = conn.execute(
        text(f"SELECT {RUN_COLUMNS} FROM index_runs i {filters} ORDER BY i.id DESC LIMIT :n"),
        {"r": repo_id, "b": before_id, "n": limit},
    )
    return [index_run_row(r._mapping) for r in rows]
