"""Reading ``index_runs`` for the dashboard: a repository's run history and what its
last run skipped."""

from __future__ import annotations

import json
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


def last_index_stats(conn: Connection, repo: str) -> dict[str, Any] | None:
    """What the newest index run of ``repo`` reported (``reviewbot index --json``)."""
    found: dict[str, Any] | None = conn.execute(
        text(
            "SELECT r.stats FROM index_runs r JOIN repositories p ON p.id = r.repository_id"
            " WHERE p.full_name = :n ORDER BY r.id DESC LIMIT 1"
        ),
        {"n": repo},
    ).scalar()
    return found


def index_model_totals(conn: Connection) -> tuple[int, int]:
    """Model calls and tokens over every index run."""
    calls, tokens = conn.execute(
        text(
            "SELECT coalesce(sum(summary_calls + embedding_calls), 0), coalesce(sum("
            "summary_prompt_tokens + summary_completion_tokens + embedding_tokens), 0)"
            " FROM index_runs"
        )
    ).one()
    return int(calls), int(tokens)


def record_index_run(
    conn: Connection,
    repo_id: int,
    *,
    failed: bool,
    full: bool,
    commit: str | None,
    summary_model: str,
    embedding_model: str,
    stats: dict[str, object],
    summary_usage: tuple[int, int, int],
    embedding_usage: tuple[int, int],
    wall_seconds: float,
    error: str | None,
) -> None:
    """One finished run: ``summary_usage`` is (calls, prompt, completion tokens),
    ``embedding_usage`` (calls, tokens)."""
    conn.execute(
        text(
            'INSERT INTO index_runs (repository_id, status, "full", commit_sha,'
            " summary_model, embedding_model, stats, summary_calls, summary_prompt_tokens,"
            " summary_completion_tokens, embedding_calls, embedding_tokens, wall_seconds,"
            " error, finished_at) VALUES (:r, :st, :f, :c, :sm, :em, CAST(:stats AS jsonb),"
            " :sc, :spt, :sct, :ec, :et, :w, :err, now())"
        ),
        {
            "r": repo_id,
            "st": "failed" if failed else "succeeded",
            "f": full,
            "c": commit,
            "sm": summary_model,
            "em": embedding_model,
            "stats": json.dumps(stats, sort_keys=True),
            "sc": summary_usage[0],
            "spt": summary_usage[1],
            "sct": summary_usage[2],
            "ec": embedding_usage[0],
            "et": embedding_usage[1],
            "w": wall_seconds,
            "err": error,
        },
    )


def indexed_from(conn: Connection, full_name: str) -> str | None:
    """The tree the repository's last successful index run read (a folder, or a git
    directory without its ``@commit``); None when it has none."""
    root = conn.execute(
        text(
            "SELECT i.stats->>'root' FROM index_runs i JOIN repositories r"
            " ON r.id = i.repository_id WHERE r.full_name = :n AND i.status = 'succeeded'"
            " ORDER BY i.id DESC LIMIT 1"
        ),
        {"n": full_name},
    ).scalar()
    return str(root).rsplit("@", 1)[0] if root else None
