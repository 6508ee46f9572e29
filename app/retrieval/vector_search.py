"""Vector search over one repository's chunks (ivfflat, cosine), and the search hit
``reviewbot search`` prints (``retrieve.search_question`` ranks them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from sqlalchemy import Connection, text

from app.db.queries.repositories import find_repository, not_indexed_message
from app.db.vector_index import set_probes
from app.db.vector_sql import cosine_distance, of_width, vector_text
from app.errors import ReviewbotError


def searchable(width: int) -> str:
    """SQL: a row of repository :r with a vector of model :m and ``width`` dimensions, not
    among the ids :ex (alias ``c``)."""
    return (
        "c.repository_id = :r AND c.embedding_model = :m AND c.embedding IS NOT NULL"
        f" AND {of_width('c.embedding', width)} AND NOT (c.id = ANY(CAST(:ex AS bigint[])))"
    )


class RepositoryNotIndexed(ReviewbotError):
    """The repository has not been indexed."""


@dataclass(frozen=True)
class SearchHit:
    """One ranked chunk; ``as_json`` is the ``reviewbot search --json`` contract."""

    chunk_id: int
    file_path: str
    start_line: int
    end_line: int
    symbol_name: str | None
    qualified_name: str | None
    chunk_type: str
    score: float
    summary: str | None

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "score": round(self.score, 4)}


def prepare_vector_search(conn: Connection, repo_id: int) -> int | None:
    """Per transaction: ``ivfflat.probes`` from the repository's index, if it has one, and
    pgvector's iterative scan, which keeps scanning lists until ``k`` rows pass the filters
    (model, excluded ids). Returns the probes; None: no index, searched exactly."""
    probes = set_probes(conn, repo_id)
    conn.execute(text("SET LOCAL ivfflat.iterative_scan = relaxed_order"))
    return probes


def nearest_chunks(
    conn: Connection,
    repo_id: int,
    vector: Sequence[float],
    model: str,
    k: int,
    exclude_ids: Sequence[int] = (),
) -> list[SearchHit]:
    """Cosine search through the ivfflat index, filtered to one repository and model.

    Call ``prepare_vector_search`` once in the transaction first.
    """
    distance = cosine_distance("c.embedding", "CAST(:q AS text)", len(vector))
    rows = conn.execute(
        text(
            "SELECT id, file_path, start_line, end_line, symbol_name, qualified_name, chunk_type,"
            f" 1 - {distance} AS score, nl_summary FROM code_chunks c"
            f" WHERE {searchable(len(vector))} ORDER BY {distance} LIMIT :k"
        ),
        {
            "q": vector_text(vector),
            "r": repo_id,
            "m": model,
            "k": k,
            "ex": list(exclude_ids),
        },
    )
    hits = [SearchHit(*row) for row in rows]
    # relaxed_order may return rows slightly out of order
    return sorted(hits, key=lambda h: (-h.score, h.file_path, h.start_line))


def indexed_repository(conn: Connection, repo: str, model: str) -> int:
    """The repository's id; refused (``RepositoryNotIndexed``) when it was never indexed
    or when its vectors are all another model's.

    Every review asks, so the usual answer reads one row: a row of ``model`` settles it.
    Only without one are the repository's models listed, which reads all its rows."""
    repo_id = find_repository(conn, repo)
    if repo_id is None:
        raise RepositoryNotIndexed(not_indexed_message(conn, repo))
    has_model = conn.execute(
        text(
            "SELECT EXISTS (SELECT 1 FROM code_chunks WHERE repository_id = :r"
            " AND embedding_model = :m AND embedding IS NOT NULL)"
        ),
        {"r": repo_id, "m": model},
    ).scalar_one()
    if has_model:
        return repo_id
    models = (
        conn.execute(
            text(
                "SELECT DISTINCT embedding_model FROM code_chunks WHERE repository_id = :r"
                " AND embedding IS NOT NULL"
            ),
            {"r": repo_id},
        )
        .scalars()
        .all()
    )
    if models:
        raise RepositoryNotIndexed(
            f"repository {repo!r} was indexed with embedding model {', '.join(sorted(models))}, "
            f"not {model}; re-run reviewbot index to re-embed it"
        )
    return repo_id
