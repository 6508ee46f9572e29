"""The fill signals (vector, lexical) for all the queries of a PR, each in one statement,
returning chunk ids best first per query; the structural signal is in
``app/retrieval/links.py``."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, text

from app.db.vector_sql import cosine_distance, search_type, vector_text
from app.db.word_counts import (
    DEFAULT_WORD_COUNTS,
    NOT_COUNTED,
    WordCountPolicy,
    WordCounts,
    word_counts,
)
from app.retrieval.search import prepare_vector_search, searchable


@dataclass(frozen=True)
class OnePass:
    """When a repository without a vector index is searched in one pass over its rows for
    all the queries (``_exact_in_one_pass``) rather than one scan a query: from ``rows``
    rows (for 20 queries, 138 against 194 ms at 4,913 rows, the same at 1,928:
    bench/RESULTS.md). ``sample_rows``: the rows whose distances bound each query's
    k-th nearest before that pass."""

    rows: int = 5_000
    sample_rows: int = 5_000


ONE_PASS = OnePass()


@dataclass(frozen=True)
class LexicalLimits:
    """Which words of a lexical query are kept. A word in more than ``frequent_share`` of a
    repository's chunks adds matches and little order; ``match_budget`` bounds the chunks
    one query may match, by its words' counts (each match is ranked)."""

    frequent_share: float
    match_budget: int
    #: words beyond this are dropped (the tsquery would only get slower)
    max_words: int = 64


#: A diff's queries: many per PR, made of identifiers, where a rare one says the most.
DIFF_LIMITS = LexicalLimits(frequent_share=0.05, match_budget=1000)
#: A question: one query per ask, in English, whose words are common in code ("proxy",
#: "header") and count together. Under the diff's limits those words were dropped and
#: the signal fell from MRR 0.257 to 0.248 and the fused ranking from 0.323 to 0.268
#: (bench/question_bench.py, 60 cases, bench/RESULTS.md).
QUESTION_LIMITS = LexicalLimits(frequent_share=0.25, match_budget=20_000)


#: (chunk id, score) best first, for each query
Scored = list[list[tuple[int, float]]]


def vector_signals(
    conn: Connection,
    repo_id: int,
    vectors: Sequence[Sequence[float]],
    model: str,
    exclude: Sequence[int],
    k: int,
    one_pass: OnePass = ONE_PASS,
) -> list[list[int]]:
    """``vector_scores`` without the scores."""
    return _ids(vector_scores(conn, repo_id, vectors, model, exclude, k, one_pass))


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
    return _per_query(rows, len(vectors))


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
    each: at a million rows, a PR's 20 queries took 5.6 s, against 31 s (bench/RESULTS.md).

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
    return _per_query(rows, count)


def query_words(terms: Sequence[str]) -> list[str]:
    """The words of ``terms`` a full-text query can use: alphanumeric runs longer than two
    characters, lower-cased, once each."""
    return sorted({w.lower() for t in terms for w in re.findall(r"[A-Za-z0-9]+", t) if len(w) > 2})


def lexical_query(
    terms: Sequence[str], counts: WordCounts = NOT_COUNTED, limits: LexicalLimits = DIFF_LIMITS
) -> str:
    """A tsquery matching any of the rarer words of ``terms``, or ''.

    Unless the repository is small (``counts.total`` 0), words in more than
    ``limits.frequent_share`` of its chunks are left out (when every word is, all are
    kept: each ranks alike), then the rarest words are kept while the chunks they can
    match stay within ``limits.match_budget``. A query whose rarest word alone is in more
    chunks finds nothing: matching it would rank thousands of chunks and order them by
    chance."""
    words = query_words(terms)
    if not counts.total:
        return " | ".join(words[: limits.max_words])
    rarest = sorted(words, key=lambda w: (counts.chunks(w), w))
    # a word not stored is in counts.stored_min chunks or fewer
    frequent = limits.frequent_share * counts.total
    rare = [w for w in rarest if counts.counts.get(w, 0) <= frequent] or rarest
    kept: list[str] = []
    matched = 0
    for word in rare[: limits.max_words]:
        matched += counts.chunks(word)
        if min(matched, counts.total) > limits.match_budget:
            break
        kept.append(word)
    return " | ".join(sorted(kept))


def lexical_signals(
    conn: Connection,
    repo_id: int,
    term_lists: Sequence[Sequence[str]],
    exclude: Sequence[int],
    k: int,
    limits: LexicalLimits = DIFF_LIMITS,
    counted: WordCountPolicy = DEFAULT_WORD_COUNTS,
) -> list[list[int]]:
    """``lexical_scores`` without the scores."""
    return _ids(lexical_scores(conn, repo_id, term_lists, exclude, k, limits, counted))


#: Okapi BM25's term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75


#: BM25 for every query of a PR in one pass: each chunk matching any query's words is
#: read and its words unnested once (``hits``), not once per query matching it (a PR's
#: 20 queries on pallets/click: 28 ms against 470 ms, bench/RESULTS.md); a word's
#: document frequency is its count among those chunks, which hold every chunk that has
#: it, so it is the repository's. Arithmetic in float8 (``numeric`` doubled the time).
_LEXICAL = """
WITH q AS MATERIALIZED (
  SELECT x.ord, w.word FROM unnest(CAST(:qs AS text[])) WITH ORDINALITY AS x(t, ord),
    unnest(string_to_array(x.t, ' | ')) AS w(word)
  WHERE x.t <> ''
), hits AS MATERIALIZED (
  SELECT c.id, CAST(length(c.search_tsv) AS float8) AS len, u.lexeme,
    CAST(coalesce(array_length(u.positions, 1), 1) AS float8) AS tf
  FROM code_chunks c, unnest(c.search_tsv) u
  -- bigint, as the index's btree_gin class compares (a smaller int would not)
  WHERE c.repository_id = CAST(:r AS bigint) AND c.search_tsv @@ to_tsquery('simple', :any)
    AND NOT (c.id = ANY(CAST(:ex AS bigint[]))) AND u.lexeme IN (SELECT word FROM q)
), idf AS (
  SELECT lexeme, ln(1 + (greatest(CAST(:n AS float8), count(*)) - count(*) + 0.5)
    / (count(*) + 0.5)) AS idf
  FROM hits GROUP BY lexeme
), scored AS (
  SELECT q.ord, h.id,
    sum(idf.idf * h.tf * (:k1 + 1) / (h.tf + :k1 * (1 - :b + :b * h.len / :avg))) AS score
  FROM q JOIN hits h ON h.lexeme = q.word JOIN idf ON idf.lexeme = q.word
  GROUP BY q.ord, h.id
), ranked AS (
  SELECT ord, id, score, row_number() OVER (PARTITION BY ord ORDER BY score DESC, id) AS n
  FROM scored
)
SELECT ord, id, score FROM ranked WHERE n <= :k ORDER BY ord, n
"""


def lexical_scores(
    conn: Connection,
    repo_id: int,
    term_lists: Sequence[Sequence[str]],
    exclude: Sequence[int],
    k: int,
    limits: LexicalLimits = DIFF_LIMITS,
    counted: WordCountPolicy = DEFAULT_WORD_COUNTS,
) -> Scored:
    """For each list of terms, full-text search over identifier words, references and
    summaries (the rarer terms match: ``lexical_query`` within ``limits``), ranked by
    Okapi BM25: a word weighs by its inverse document frequency in the repository, so a
    rare shared identifier outweighs a common one (``bm25_score`` is the same formula in
    Python). All the queries in one statement (``_LEXICAL``), after one that reads the
    words' counts and the repository's size."""
    words = {w for terms in term_lists for w in query_words(terms)}
    counts = word_counts(conn, repo_id, words, counted)
    queries = [lexical_query(terms, counts, limits) for terms in term_lists]
    if not any(queries):
        return [[] for _ in queries]
    rows = conn.execute(
        text(_LEXICAL),
        {
            "qs": queries,
            "any": " | ".join(sorted({w for q in queries if q for w in q.split(" | ")})),
            "r": repo_id,
            "ex": list(exclude),
            "k": k,
            "n": max(counts.documents, 1),
            "avg": max(counts.average_length, 1.0),
            "k1": BM25_K1,
            "b": BM25_B,
        },
    )
    return _per_query(rows, len(queries))


def bm25_score(
    query: Sequence[str],
    document: Mapping[str, int],
    document_frequency: Mapping[str, int],
    documents: int,
    average_length: float,
) -> float:
    """Okapi BM25 of one document (word -> occurrences) for ``query``'s words, the
    formula ``lexical_scores`` runs in SQL (document length: its distinct words, as
    PostgreSQL's ``length(tsvector)`` counts). Pure."""
    length = len(document)
    score = 0.0
    for word in dict.fromkeys(query):
        tf = document.get(word, 0)
        if not tf:
            continue
        df = document_frequency[word]
        idf = math.log(1 + (max(documents, df) - df + 0.5) / (df + 0.5))
        norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average_length)
        score += idf * tf * (BM25_K1 + 1) / (tf + norm)
    return score


def _ids(scored: Scored) -> list[list[int]]:
    return [[chunk_id for chunk_id, _ in hits] for hits in scored]


def _per_query(rows: Iterable[Any], count: int) -> Scored:
    """Rows of (1-based query ordinal, chunk id, score), ordered, as one list per query."""
    ranked: Scored = [[] for _ in range(count)]
    for ordinal, chunk_id, score in rows:
        ranked[ordinal - 1].append((chunk_id, float(score)))
    return ranked
