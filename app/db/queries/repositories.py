"""Reading repositories for the dashboard: totals, one page of repositories with their
index's size, languages and last run, and one repository by id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Row, text

from app.db.queries import lock_until_commit, where
from app.db.queries.index_runs import RUN_COLUMNS, IndexRunRow, index_run_row


@dataclass(frozen=True)
class Totals:
    repositories: int
    chunks: int


@dataclass(frozen=True)
class RepositoryRow:
    id: int
    full_name: str
    installation_id: int | None
    default_branch: str | None
    last_indexed_commit: str | None
    chunks: int
    files: int
    languages: list[tuple[str, int]]  # most files first
    last_run: IndexRunRow | None
    # while summaries and vectors are made in the background: the chunks that have them
    # (None: not pending, all have them)
    enriched: int | None = None


#: A repository's chunk count as its last successful index run left it: read from one
#: row, where counting ``code_chunks`` would read every chunk of a large repository.
_CHUNKS = """
  (SELECT (i.stats->'chunks'->>'total')::bigint FROM index_runs i
    WHERE i.repository_id = {repo} AND i.status = 'succeeded'
    ORDER BY i.started_at DESC, i.id DESC LIMIT 1)
"""


def totals(conn: Connection) -> Totals:
    """Repositories, and chunks over all of them (each as of its last successful run)."""
    row = conn.execute(
        text(
            f"SELECT count(*) AS repositories, coalesce(sum({_CHUNKS.format(repo='r.id')}), 0)"
            " AS chunks FROM repositories r"
        )
    ).one()
    return Totals(int(row.repositories), int(row.chunks))


_PAGE = f"""
WITH page AS (
  SELECT id, full_name, installation_id, default_branch, last_indexed_commit, enrich_pending
    FROM repositories {{where}} ORDER BY full_name LIMIT :n
)
SELECT p.*,
  CASE WHEN p.enrich_pending THEN (SELECT count(*) FROM code_chunks c
     WHERE c.repository_id = p.id AND c.embedding IS NOT NULL) END AS enriched,
  coalesce({_CHUNKS.format(repo="p.id")}, 0) AS chunks,
  (SELECT count(*) FROM source_files f WHERE f.repository_id = p.id) AS files,
  (SELECT coalesce(json_agg(json_build_array(language, n) ORDER BY n DESC, language), '[]')
     FROM (SELECT language, count(*) AS n FROM source_files f
            WHERE f.repository_id = p.id AND language IS NOT NULL GROUP BY language) l
  ) AS languages,
  run.*
FROM page p
LEFT JOIN LATERAL (
  SELECT {RUN_COLUMNS} FROM index_runs i
   WHERE i.repository_id = p.id ORDER BY i.started_at DESC, i.id DESC LIMIT 1
) run ON TRUE
ORDER BY p.full_name
"""


def repository_page(
    conn: Connection, limit: int, after_name: str | None = None
) -> list[RepositoryRow]:
    """``limit`` repositories by name, after ``after_name``."""
    filters = where((after_name is not None, "full_name > :a"))
    rows = conn.execute(text(_PAGE.format(where=filters)), {"a": after_name, "n": limit})
    return [_repository_row(r) for r in rows]


def repository(conn: Connection, repo_id: int) -> RepositoryRow | None:
    found = conn.execute(text(_PAGE.format(where="WHERE id = :i")), {"i": repo_id, "n": 1}).first()
    return _repository_row(found) if found is not None else None


def _repository_row(r: Row[Any]) -> RepositoryRow:
    row = r._mapping
    return RepositoryRow(
        id=row["id"],
        full_name=row["full_name"],
        installation_id=row["installation_id"],
        default_branch=row["default_branch"],
        last_indexed_commit=row["last_indexed_commit"],
        chunks=int(row["chunks"]),
        files=int(row["files"]),
        languages=[(str(lang), int(n)) for lang, n in row["languages"]],
        last_run=index_run_row(row) if row["run_id"] is not None else None,
        enriched=int(row["enriched"]) if row["enriched"] is not None else None,
    )


def installation_of(conn: Connection, repo: str) -> int | None:
    """The GitHub App installation ``repo`` belongs to (None: unknown, or from the CLI)."""
    found = conn.execute(
        text("SELECT installation_id FROM repositories WHERE full_name = :n"), {"n": repo}
    ).scalar()
    return int(found) if found is not None else None


def indexed_commit(conn: Connection, repo: str) -> str | None:
    """The commit ``repo``'s index was last brought to."""
    found = conn.execute(
        text("SELECT last_indexed_commit FROM repositories WHERE full_name = :n"), {"n": repo}
    ).scalar()
    return str(found) if found is not None else None


def index_state(conn: Connection, repo: str) -> tuple[str | None, int | None]:
    """(the commit last indexed, the oldest link version among its files)."""
    found = conn.execute(
        text(
            "SELECT r.last_indexed_commit, (SELECT min(f.link_version) FROM source_files f"
            " WHERE f.repository_id = r.id) FROM repositories r WHERE r.full_name = :n"
        ),
        {"n": repo},
    ).one_or_none()
    return (found[0], found[1]) if found is not None else (None, None)


def delete_repository(conn: Connection, repo: str) -> None:
    """Forget ``repo``: its files, chunks, reviews and runs go with it (cascade)."""
    conn.execute(text("DELETE FROM repositories WHERE full_name = :n"), {"n": repo})


def mark_indexed(conn: Connection, repo_id: int, commit: str | None) -> None:
    conn.execute(
        text("UPDATE repositories SET last_indexed_commit = :c, updated_at = now() WHERE id = :r"),
        {"c": commit, "r": repo_id},
    )


def set_enrich_pending(conn: Connection, repo_id: int, pending: bool) -> None:
    conn.execute(
        text("UPDATE repositories SET enrich_pending = :p WHERE id = :r"),
        {"p": pending, "r": repo_id},
    )


def enrich_pending(conn: Connection, repo: str) -> bool:
    """Whether ``repo``'s summaries and vectors are still being made in the background."""
    return bool(
        conn.execute(
            text("SELECT enrich_pending FROM repositories WHERE full_name = :n"), {"n": repo}
        ).scalar()
    )


def vector_index_declined_rows(conn: Connection, repo_id: int) -> int:
    """The repository's size when its vector index was last declined (0: never)."""
    return int(
        conn.execute(
            text("SELECT vector_index_declined_rows FROM repositories WHERE id = :r"),
            {"r": repo_id},
        ).scalar_one()
    )


def record_vector_index_declined(conn: Connection, repo_id: int, rows: int) -> None:
    conn.execute(
        text("UPDATE repositories SET vector_index_declined_rows = :n WHERE id = :r"),
        {"n": rows, "r": repo_id},
    )


def repository_id(
    conn: Connection,
    full_name: str,
    *,
    installation_id: int | None = None,
    default_branch: str | None = None,
) -> int:
    """The id of ``full_name``, created on first use; the host's fields given are recorded."""
    row = conn.execute(
        text(
            "INSERT INTO repositories (full_name, installation_id, default_branch)"
            " VALUES (:n, :i, :b) ON CONFLICT (full_name) DO UPDATE SET"
            " installation_id = coalesce(excluded.installation_id, repositories.installation_id),"
            " default_branch = coalesce(excluded.default_branch, repositories.default_branch),"
            " updated_at = now() RETURNING id"
        ),
        {"n": full_name, "i": installation_id, "b": default_branch},
    ).scalar_one()
    return int(row)


def known_repositories(conn: Connection, limit: int = 20) -> list[str]:
    """The names of indexed repositories, at most ``limit``, alphabetically."""
    rows = conn.execute(
        text("SELECT full_name FROM repositories ORDER BY full_name LIMIT :n"), {"n": limit}
    )
    return [str(name) for name in rows.scalars()]


def not_indexed_message(conn: Connection, full_name: str) -> str:
    """What to say of a repository name the index does not know: the names it does."""
    known = known_repositories(conn)
    listed = f"indexed: {', '.join(known)}" if known else "nothing is indexed yet"
    return (
        f"repository {full_name!r} is not indexed ({listed}); "
        f"run: reviewbot index PATH --repo {full_name}"
    )


def find_repository(conn: Connection, full_name: str) -> int | None:
    """The id of ``full_name``, or None when it was never indexed."""
    found = conn.execute(
        text("SELECT id FROM repositories WHERE full_name = :n"), {"n": full_name}
    ).scalar()
    return int(found) if found is not None else None


def locked_repository(conn: Connection, repo: str, installation_id: int, key: str) -> int:
    """The repository's id, with ``key`` locked until the transaction ends: one claim at
    a time per review or question."""
    repo_id = int(repository_id(conn, repo, installation_id=installation_id))
    lock_until_commit(conn, key)
    return repo_id
