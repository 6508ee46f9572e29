"""Reading ``code_chunks`` rows by id (the dashboard shows the code of search hits)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text


def chunk_code(conn: Connection, ids: Sequence[int]) -> dict[int, str]:
    """The source of each chunk in ``ids`` that still exists."""
    rows = conn.execute(
        text("SELECT id, raw_code FROM code_chunks WHERE id = ANY(CAST(:ids AS bigint[]))"),
        {"ids": list(ids)},
    )
    return {int(r.id): str(r.raw_code) for r in rows}


def count_chunks(conn: Connection, repo_id: int) -> int:
    return int(
        conn.execute(
            text("SELECT count(*) FROM code_chunks WHERE repository_id = :r"), {"r": repo_id}
        ).scalar_one()
    )


def last_chunk_id(conn: Connection) -> int:
    """The newest chunk id of any repository (0 when there is none)."""
    return int(conn.execute(text("SELECT coalesce(max(id), 0) FROM code_chunks")).scalar_one())


#: Statistics are refreshed when a run changed more than this share of the rows they
#: describe (autovacuum's ``analyze_scale_factor``, but at once rather than within a minute).
ANALYZE_SHARE = 0.1


def analyze_if_changed(conn: Connection, changed_rows: int) -> bool:
    """``ANALYZE code_chunks`` when ``changed_rows`` is over ``ANALYZE_SHARE`` of the rows
    the planner's statistics know of. After a first load the statistics describe an empty
    table, and a review's full-text statement planned from them took three times as long
    (zod, bench/RESULTS.md). Returns whether it ran."""
    known = conn.execute(
        text("SELECT reltuples FROM pg_class WHERE oid = 'code_chunks'::regclass")
    ).scalar_one()
    if changed_rows <= ANALYZE_SHARE * max(float(known), 0.0):
        return False
    conn.execute(text("ANALYZE code_chunks"))
    return True


def embedded_rows(conn: Connection, repo_id: int) -> int:
    """The repository's chunks that have a vector."""
    return int(
        conn.execute(
            text(
                "SELECT count(*) FROM code_chunks WHERE repository_id = :r"
                " AND embedding IS NOT NULL"
            ),
            {"r": repo_id},
        ).scalar_one()
    )


def vector_width(conn: Connection, repo_id: int) -> int | None:
    """The width of the repository's vectors (one model's, so one width), or None when it
    has none."""
    found = conn.execute(
        text(
            "SELECT vector_dims(embedding) FROM code_chunks WHERE repository_id = :r"
            " AND embedding IS NOT NULL LIMIT 1"
        ),
        {"r": repo_id},
    ).scalar_one_or_none()
    return None if found is None else int(found)
