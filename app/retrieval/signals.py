"""The fill signals (vector, lexical) for all the queries of a PR, each in one statement,
returning chunk ids best first per query; the structural signal is in
``app/retrieval/links.py``. Run in one transaction, after ``prepare_vector_search``."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from pgvector import Vector
from sqlalchemy import Connection, text

from app.db.frequent_words import frequent_words
from app.db.vector_index import SEARCH_TYPE, cosine_distance

DISTANCE = cosine_distance("c.embedding", "q.v")
#: Words of one lexical query beyond this are dropped (the tsquery would only get slower).
MAX_LEXICAL_WORDS = 64


def vector_signals(
    conn: Connection,
    repo_id: int,
    vectors: Sequence[Sequence[float]],
    model: str,
    exclude: Sequence[int],
    k: int,
) -> list[list[int]]:
    """For each query vector, the nearest chunks by cosine similarity of summaries'
    embeddings: one ivfflat search per vector, all in one statement."""
    if not vectors:
        return []
    rows = conn.execute(
        text(
            # float16 once per query: a cast in the distance would run once per row scanned
            f"SELECT q.ord, hit.id FROM unnest(CAST(:qs AS {SEARCH_TYPE}[]))"
            " WITH ORDINALITY AS q(v, ord)"
            " CROSS JOIN LATERAL (SELECT c.id, c.file_path, c.start_line,"
            f"  {DISTANCE} AS distance FROM code_chunks c"
            "  WHERE c.repository_id = :r AND c.embedding_model = :m AND c.embedding IS NOT NULL"
            "  AND NOT (c.id = ANY(CAST(:ex AS bigint[])))"
            f"  ORDER BY {DISTANCE} LIMIT :k) hit"
            # relaxed_order may return a query's rows slightly out of order
            " ORDER BY q.ord, hit.distance, hit.file_path, hit.start_line"
        ),
        {
            "qs": [Vector(list(v)).to_text() for v in vectors],
            "r": repo_id,
            "m": model,
            "ex": list(exclude),
            "k": k,
        },
    )
    return _per_query(rows, len(vectors))


def lexical_query(terms: Sequence[str], frequent: Collection[str] = frozenset()) -> str:
    """A tsquery matching any word of ``terms`` (longer than two characters) except the
    repository's ``frequent`` ones, or ''. When every word is frequent, all are kept."""
    words = sorted({w.lower() for t in terms for w in re.findall(r"[A-Za-z0-9]+", t) if len(w) > 2})
    rare = [w for w in words if w not in frequent] or words
    return " | ".join(rare[:MAX_LEXICAL_WORDS])


def lexical_signals(
    conn: Connection,
    repo_id: int,
    term_lists: Sequence[Sequence[str]],
    exclude: Sequence[int],
    k: int,
) -> list[list[int]]:
    """For each list of terms, full-text search over identifier words, references and
    summaries (any term but the repository's frequent words matches), best first: all
    in one statement."""
    common = frequent_words(conn, repo_id)
    queries = [lexical_query(terms, common) for terms in term_lists]
    if not any(queries):
        return [[] for _ in queries]
    rows = conn.execute(
        text(
            "SELECT q.ord, hit.id FROM unnest(CAST(:qs AS text[])) WITH ORDINALITY AS q(t, ord)"
            " CROSS JOIN LATERAL (SELECT c.id, ts_rank(c.search_tsv, query) AS rank"
            "  FROM code_chunks c, to_tsquery('simple', q.t) query"
            "  WHERE q.t <> '' AND c.repository_id = :r AND c.search_tsv @@ query"
            "  AND NOT (c.id = ANY(CAST(:ex AS bigint[])))"
            "  ORDER BY rank DESC, c.id LIMIT :k) hit"
            " ORDER BY q.ord, hit.rank DESC, hit.id"
        ),
        {"qs": queries, "r": repo_id, "ex": list(exclude), "k": k},
    )
    return _per_query(rows, len(queries))


def _per_query(rows: Iterable[Any], count: int) -> list[list[int]]:
    """Rows of (1-based query ordinal, chunk id), ordered, as one id list per query."""
    ranked: list[list[int]] = [[] for _ in range(count)]
    for ordinal, chunk_id in rows:
        ranked[ordinal - 1].append(chunk_id)
    return ranked
