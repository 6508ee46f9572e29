"""Rows for tests that write ``code_chunks`` directly (vector search, migrations)."""

from __future__ import annotations

from sqlalchemy import Connection, text


def new_repository(conn: Connection, name: str) -> tuple[int, int]:
    """A repository named ``name`` with one source file (``a.py``) for its chunks to
    belong to: (repository id, file id)."""
    repo = conn.execute(
        text("INSERT INTO repositories (full_name) VALUES (:n) RETURNING id"), {"n": name}
    ).scalar_one()
    file = conn.execute(
        text(
            "INSERT INTO source_files (repository_id, path, content_hash, size_bytes)"
            " VALUES (:r, 'a.py', 'h', 1) RETURNING id"
        ),
        {"r": repo},
    ).scalar_one()
    return int(repo), int(file)
