"""The fill signals (vector, lexical) for all the queries of a PR, each in one statement,
returning chunk ids best first per query; the structural signal is in
``app/retrieval/links.py``. Run in one transaction, after ``prepare_vector_search``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, text

from app.db.vector_index import SEARCH_TYPE, cosine_distance, vector_text
from app.db.word_counts import NOT_COUNTED, WordCounts, word_counts

DISTANCE = cosine_distance("c.embedding", "q.v")
#: Words of one lexical query beyond this are dropped (the tsquery would only get slower).
MAX_LEXICAL_WORDS = 64
#: A word in more than this share of a repository's chunks adds matches and no order.
FREQUENT_SHARE = 0.05
#: The chunks one lexical query may match, by its words' counts (each match is ranked).
MATCH_BUDGET = 1000


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
            "qs": [vector_text(v) for v in vectors],
            "r": repo_id,
            "m": model,
            "ex": list(exclude),
            "k": k,
        },
    )
    return _per_query(rows, len(vectors))


def query_words(terms: Sequence[str]) -> list[str]:
    """The words of ``terms`` a full-text query can use: alphanumeric runs longer than two
    characters, lower-cased, once each."""
    return sorted({w.lower() for t in terms for w in re.findall(r"[A-Za-z0-9]+", t) if len(w) > 2})


def lexical_query(terms: Sequence[str], counts: WordCounts = NOT_COUNTED) -> str:
    """A tsquery matching any of the rarer words of ``terms``, or ''.

    Unless the repository is small (``counts.total`` 0), words in more than
    ``FREQUENT_SHARE`` of its chunks are left out (when every word is, all are kept: each
    ranks alike), then the rarest words are kept while the chunks they can match stay
    within ``MATCH_BUDGET``. A query whose rarest word alone is in more chunks finds
    nothing: matching it would rank thousands of chunks and order them by chance."""
    words = query_words(terms)
    if not counts.total:
        return " | ".join(words[:MAX_LEXICAL_WORDS])
    rarest = sorted(words, key=lambda w: (counts.chunks(w), w))
    frequent = FREQUENT_SHARE * counts.total  # a word not stored is in STORED_MIN or fewer
    rare = [w for w in rarest if counts.counts.get(w, 0) <= frequent] or rarest
    kept: list[str] = []
    matched = 0
    for word in rare[:MAX_LEXICAL_WORDS]:
        matched += counts.chunks(word)
        if min(matched, counts.total) > MATCH_BUDGET:
            break
        kept.append(word)
    return " | ".join(sorted(kept))


def lexical_signals(
    conn: Connection,
    repo_id: int,
    term_lists: Sequence[Sequence[str]],
    exclude: Sequence[int],
    k: int,
) -> list[list[int]]:
    """For each list of terms, full-text search over identifier words, references and
    summaries (the rarer terms match: ``lexical_query``), best first: all in one
    statement, after one that reads the words' counts."""
    counts = word_counts(conn, repo_id, {w for terms in term_lists for w in query_words(terms)})
    queries = [lexical_query(terms, counts) for terms in term_lists]
    if not any(queries):
        return [[] for _ in queries]
    rows = conn.execute(
        text(
            "SELECT q.ord, hit.id FROM unnest(CAST(:qs AS text[])) WITH ORDINALITY AS q(t, ord)"
            " CROSS JOIN LATERAL (SELECT c.id, ts_rank(c.search_tsv, query) AS rank"
            "  FROM code_chunks c, to_tsquery('simple', q.t) query"
            # bigint, as the index's btree_gin class compares (a smaller int would not)
            "  WHERE q.t <> '' AND c.repository_id = CAST(:r AS bigint)"
            "  AND c.search_tsv @@ query"
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
