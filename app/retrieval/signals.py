"""The three search signals, each returning chunk ids best first. Run in one transaction."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlalchemy import Connection, text

from app.retrieval.search import nearest_chunks


def vector_signal(
    conn: Connection,
    repo_id: int,
    vector: Sequence[float],
    model: str,
    exclude: Sequence[int],
    k: int,
) -> list[int]:
    """Nearest chunks by cosine similarity of summaries' embeddings."""
    return [hit.chunk_id for hit in nearest_chunks(conn, repo_id, vector, model, k, exclude)]


def lexical_signal(
    conn: Connection, repo_id: int, terms: Sequence[str], exclude: Sequence[int], k: int
) -> list[int]:
    """Full-text search over identifier words, references and summaries (any term matches)."""
    words = sorted({w.lower() for t in terms for w in re.findall(r"[A-Za-z0-9]+", t) if len(w) > 2})
    if not words:
        return []
    query = " | ".join(words[:64])
    rows = conn.execute(
        text(
            "SELECT id FROM code_chunks, to_tsquery('simple', :q) query"
            " WHERE repository_id = :r AND search_tsv @@ query"
            " AND NOT (id = ANY(CAST(:ex AS bigint[])))"
            " ORDER BY ts_rank_cd(search_tsv, query) DESC, id LIMIT :k"
        ),
        {"q": query, "r": repo_id, "ex": list(exclude), "k": k},
    )
    return [r[0] for r in rows]


def structural_signal(
    conn: Connection,
    repo_id: int,
    uses: Sequence[str],
    name: str | None,
    exclude: Sequence[int],
    k: int,
) -> list[int]:
    """Definitions of the names the changed function uses, then the chunks that use its name.

    Definitions come in the order the function mentions them; callers by id.
    """
    definitions: list[int] = []
    if uses:
        definitions = [
            r[0]
            for r in conn.execute(
                text(
                    "SELECT id FROM code_chunks WHERE repository_id = :r"
                    " AND symbol_name = ANY(CAST(:names AS text[])) AND chunk_type <> 'module'"
                    " AND NOT (id = ANY(CAST(:ex AS bigint[])))"
                    " ORDER BY array_position(CAST(:names AS text[]), symbol_name), id LIMIT :k"
                ),
                {"r": repo_id, "names": list(uses), "ex": list(exclude), "k": k},
            )
        ]
    callers: list[int] = []
    if name:
        callers = [
            r[0]
            for r in conn.execute(
                text(
                    'SELECT id FROM code_chunks WHERE repository_id = :r AND "references" @>'
                    " ARRAY[CAST(:name AS text)] AND NOT (id = ANY(CAST(:ex AS bigint[])))"
                    " ORDER BY id LIMIT :k"
                ),
                {"r": repo_id, "name": name, "ex": list(exclude), "k": k},
            )
        ]
    merged: list[int] = []
    for chunk_id in definitions + callers:
        if chunk_id not in merged:
            merged.append(chunk_id)
    return merged[:k]
