"""The vector signal for all the queries of a PR in one statement, returning chunk ids
best first per query, and what every search signal returns (``Scored``); the full-text
signals are in ``app/retrieval/full_text.py``, the structural one in
``app/retrieval/links.py``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, text

from app.db.vector_sql import cosine_distance, search_type, vector_text
from app.retrieval.vector_search import prepare_vector_search, searchable


@dataclass(frozen=True)
class OnePass:
    """When a repository without a vector index is searched in one pass over its rows for
    all the queries (``_exact_in_one_pass``) rather than one scan a query: from ``rows``
    rows (bench/RESULTS.md, "Exact search in one pass"). ``sample_rows``: the rows whose
    distances bound each query's k-th nearest before that pass."""

    rows: int = 5_000
    sample_rows: int = 5_000


ONE_PASS = OnePass()


#: (chunk id, score) best first, for each query
Scored = list[list[tuple[int, float]]]


def vector_scores(
    conn: Connection,
    repo_id: int,
    vectors: Sequence[Sequence[float]],
    model: str,
    exclude: Sequence[int],
    k: int,
    one_pass: OnePass = ONE_PASS,
) -> Scored:
    """For each query vector, the nearest chunks by cosine similarity of summaries'
    embeddings, with that similarity: one ivfflat search per vector, all in one
    statement; or, in a large repository without an index, an exact search in one pass
    (``_exact_in_one_pass``). Sets the transaction up for the search first
    (``prepare_vector_search``). The vectors are one model's, so of one width: rows of
    another width (the model's, stored before it changed) are not compared."""
    if not vectors:
        return []
    indexed = prepare_vector_search(conn, repo_id) is not None
    width = len(vectors[0])
    params = {
        "qs": [vector_text(v) for v in vectors],
        "r": repo_id,
        "m": model,
        "ex": list(exclude),
        "k": k,
    }
    if not indexed and _has_rows(conn, repo_id, one_pass.rows):
        return _exact_in_one_pass(conn, params, width, len(vectors), one_pass.sample_rows)
    distance = cosine_distance("c.embedding", "q.v", width)
    rows = conn.execute(
        text(
            # float16 once per query: a cast in the distance would run once per row scanned
            "SELECT q.ord, hit.id, 1 - hit.distance"
            f" FROM unnest(CAST(:qs AS {search_type(width)}[])) WITH ORDINALITY AS q(v, ord)"
            " CROSS JOIN LATERAL (SELECT c.id, c.file_path, c.start_line,"
            f"  {distance} AS distance FROM code_chunks c WHERE {searchable(width)}"
            f"  ORDER BY {distance} LIMIT :k) hit"
            # relaxed_order may return a query's rows slightly out of order
            " ORDER BY q.ord, hit.distance, hit.file_path, hit.start_line"
        ),
        params,
    )
    return per_query(rows, len(vectors))


def _has_rows(conn: Connection, repo_id: int, rows: int) -> bool:
    """Whether the repository has at least ``rows`` chunks (reads at most that many
    entries of an index)."""
    found = conn.execute(
        text(
            "SELECT count(*) FROM (SELECT 1 FROM code_chunks WHERE repository_id = :r LIMIT :n) s"
        ),
        {"r": repo_id, "n": rows},
    ).scalar_one()
    return int(found) >= rows


def _exact_in_one_pass(
    conn: Connection, params: dict[str, Any], width: int, count: int, sample_rows: int
) -> Scored:
    """The exact nearest ``k`` of each query, reading the repository's rows once for all
    the queries (in parallel, when the server may), where a scan per query reads them once
    each (several times faster for a PR's queries; bench/RESULTS.md, "Vector search at
    a million chunks").

    First, each query's distance to its ``k``-th nearest among ``sample_rows`` of the
    rows (ordered by content hash: a spread of the repository) bounds its true ``k``-th
    nearest, since the sample is a subset of the rows searched; then the pass keeps only
    the rows within each bound, and ranks those. A sample of fewer than ``k`` rows is
    every row there is, so its farthest bounds them all. Two statements: if chunks are
    deleted between them, a query may get fewer than ``k``, never a wrong row."""
    distance, vectors = cosine_distance("c.embedding", "q.v", width), search_type(width)
    bounds = (
        conn.execute(
            text(
                "WITH sample AS MATERIALIZED (SELECT c.embedding FROM code_chunks c"
                f" WHERE {searchable(width)} ORDER BY c.repository_id, c.content_hash LIMIT :s)"
                " SELECT (SELECT max(d) FROM"
                f"  (SELECT {cosine_distance('s.embedding', 'q.v', width)} AS d FROM sample s"
                "   ORDER BY 1 LIMIT :k) nearest)"
                f" FROM unnest(CAST(:qs AS {vectors}[])) WITH ORDINALITY AS q(v, ord)"
                " ORDER BY q.ord"
            ),
            {**params, "s": max(sample_rows, params["k"])},
        )
        .scalars()
        .all()
    )
    rows = conn.execute(
        text(
            f"SELECT ord, id, 1 - distance FROM (SELECT q.ord, c.id, {distance} AS distance,"
            " row_number() OVER (PARTITION BY q.ord"
            f"  ORDER BY {distance}, c.file_path, c.start_line) AS n"
            f" FROM code_chunks c JOIN unnest(CAST(:qs AS {vectors}[]),"
            "  CAST(:b AS float8[])) WITH ORDINALITY AS q(v, bound, ord)"
            f"  ON {distance} <= q.bound"
            f" WHERE {searchable(width)}) ranked WHERE n <= :k ORDER BY ord, n"
        ),
        {**params, "b": list(bounds)},
    )
    return per_query(rows, count)


def ids(scored: Scored) -> list[list[int]]:
    return [[chunk_id for chunk_id, _ in hits] for hits in scored]


def per_query(rows: Iterable[Any], count: int) -> Scored:
    """Rows of (1-based query ordinal, chunk id, score), ordered, as one list per query."""
    ranked: Scored = [[] for _ in range(count)]
    for ordinal, chunk_id, score in rows:
        ranked[ordinal - 1].append((chunk_id, float(score)))
    return ranked
