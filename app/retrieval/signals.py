"""The fill signals (vector, lexical), each returning chunk ids best first; the structural
signal is in ``app/retrieval/links.py``. Run in one transaction."""

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
