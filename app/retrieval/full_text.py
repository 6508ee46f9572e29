"""The full-text signals for all the queries of a PR, each in one statement, ranked by
Okapi BM25: ``lexical`` over names, references and summaries (``search_tsv``), ``words``
over the words of the chunks' code (``code_tsv``, ``app/db/code_words.py``)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sqlalchemy import Connection, text

from app.db.code_words import code_words_sql
from app.db.word_counts import (
    DEFAULT_WORD_COUNTS,
    NOT_COUNTED,
    WordCountPolicy,
    WordCounts,
    word_counts,
)
from app.retrieval.vector_signal import Scored, per_query


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
#: "header") and count together: under the diff's limits those words were dropped and
#: the question benchmark's first hits got worse (bench/RESULTS.md, "Question to code").
QUESTION_LIMITS = LexicalLimits(frequent_share=0.25, match_budget=20_000)


#: English function words: in a question they match every docstring and comment, and in a
#: small repository (whose words are not counted) nothing drops them.
STOP_WORDS = frozenset(
    "the and for with from that this these those are was were been being has have had"
    " how what where which who whom why when does did doing into onto its our your their"
    " there here than then them they about should would could will shall might must also"
    " just very".split()
)


def question_terms(question: str) -> str:
    """A question's words for the word signals: runs of letters, digits and underscores
    (an identifier stays whole) longer than two characters, without English function
    words; the vector signal embeds the question whole. Pure."""
    words = re.findall(r"[A-Za-z0-9_]+", question)
    return " ".join(w for w in words if len(w) > 2 and w.lower() not in STOP_WORDS)


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


#: Okapi BM25's term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75


#: BM25 for every query of a PR in one pass, over tsvector column ``{column}``: each
#: query's words (``:qs``, ' | '-joined) score the chunks holding any of the matching
#: words (``:any``); each such chunk is read and its words unnested once (``hits``), not
#: once per query matching it (an order of magnitude less time for a PR's queries,
#: bench/RESULTS.md, "Batched retrieval"). A matching word's document frequency is its
#: count among those chunks, which hold every chunk that has it, so it is the
#: repository's; any other word's is its count (``:kw``, ``:kdf``). Arithmetic in float8
#: (``numeric`` doubled the time).
_BM25 = """
WITH q AS MATERIALIZED (
  SELECT x.ord, x.path, w.word, w.word = ANY(string_to_array(x.m, ' | ')) AS matching
  FROM unnest(CAST(:qs AS text[]), CAST(:ms AS text[]), CAST(:paths AS text[]))
    WITH ORDINALITY AS x(t, m, path, ord),
    unnest(string_to_array(x.t, ' | ')) AS w(word)
  WHERE x.t <> ''
), hits AS MATERIALIZED (
  SELECT c.id, c.file_path, l.len, u.lexeme,
    CAST(coalesce(array_length(u.positions, 1), 1) AS float8) AS tf
  -- the length once a chunk (OFFSET 0 keeps it a subquery), not once a matched word: each
  -- call reads the tsvector again (bench/RESULTS.md)
  FROM code_chunks c CROSS JOIN LATERAL
    (SELECT CAST(length(c.{column}) AS float8) AS len OFFSET 0) l,
    -- only the queries' words, marked and kept in C, not every word unnested and compared
    unnest(ts_filter(setweight(c.{column}, 'A', CAST(:words AS text[])), '{{a}}')) u
  -- bigint, as the index's btree_gin class compares (a smaller int would not)
  WHERE c.repository_id = CAST(:r AS bigint) AND c.{column} @@ to_tsquery('simple', :any)
    AND NOT (c.id = ANY(CAST(:ex AS bigint[])))
), df AS (
  -- a word the matched chunks do not all hold (not a matching word) has its counted df
  SELECT h.lexeme, CAST(greatest(count(*), coalesce(min(k.df), 0)) AS float8) AS df
  FROM hits h LEFT JOIN unnest(CAST(:kw AS text[]), CAST(:kdf AS int[])) AS k(word, df)
    ON k.word = h.lexeme
  GROUP BY h.lexeme
), idf AS (
  SELECT lexeme, ln(1 + (greatest(CAST(:n AS float8), df) - df + 0.5) / (df + 0.5)) AS idf
  FROM df
), chosen AS (
  -- a query scores the chunks holding one of its matching words, outside its own file
  SELECT DISTINCT q.ord, h.id FROM q JOIN hits h ON h.lexeme = q.word
  WHERE q.matching AND h.file_path <> q.path
), scored AS (
  SELECT ch.ord, h.id,
    sum(idf.idf * h.tf * (:k1 + 1) / (h.tf + :k1 * (1 - :b + :b * h.len / :avg))) AS score
  FROM chosen ch JOIN hits h ON h.id = ch.id
    JOIN q ON q.ord = ch.ord AND q.word = h.lexeme JOIN idf ON idf.lexeme = h.lexeme
  GROUP BY ch.ord, h.id
), ranked AS (
  SELECT ord, id, score, row_number() OVER (PARTITION BY ord ORDER BY score DESC, id) AS n
  FROM scored
)
SELECT ord, id, score FROM ranked WHERE n <= :k ORDER BY ord, n
"""

_LEXICAL = _BM25.format(column="search_tsv")
_CODE_WORDS = _BM25.format(column="code_tsv")
#: Each query's words, as the column's (``code_words_sql``).
_WORDS_OF_CODE = (
    "SELECT DISTINCT x.ord, w.lexeme FROM unnest(CAST(:qs AS text[])) WITH ORDINALITY"
    f" AS x(code, ord), unnest({code_words_sql('x.code')}) AS w ORDER BY 1, 2"
)


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
    split = [q.split(" | ") if q else [] for q in queries]
    return _bm25(
        conn,
        _LEXICAL,
        repo_id,
        [(words, words, "") for words in split],
        {},
        exclude,
        k,
        counts.documents,
        counts.average_length,
    )


def _bm25(
    conn: Connection,
    statement: str,
    repo_id: int,
    queries: Sequence[tuple[list[str], list[str], str]],
    known: Mapping[str, int],
    exclude: Sequence[int],
    k: int,
    documents: int,
    average_length: float,
) -> Scored:
    """Run ``_BM25`` over a column for queries of (words scored, words matching chunks,
    the file whose chunks are left out or ''), with the counted document frequencies
    ``known`` of words the matched chunks may not all hold."""
    rows = conn.execute(
        text(statement),
        {
            "qs": [" | ".join(words) for words, _, _ in queries],
            "ms": [" | ".join(matching) for _, matching, _ in queries],
            "paths": [path for _, _, path in queries],
            "words": sorted({w for words, _, _ in queries for w in words}),
            "any": " | ".join(sorted({w for _, matching, _ in queries for w in matching})),
            "kw": list(known),
            "kdf": list(known.values()),
            "r": repo_id,
            "ex": list(exclude),
            "k": k,
            "n": max(documents, 1),
            "avg": max(average_length, 1.0),
            "k1": BM25_K1,
            "b": BM25_B,
        },
    )
    return per_query(rows, len(queries))


#: A changed function's code as a query of the words signal. Every word counts (dropping
#: all but the rarest 32 cost a third of BM25's first-hit rank on the co-change
#: benchmark), but those in more than ``frequent_share`` of a counted repository's
#: chunks (they order little); the chunks scored are those holding one of the query's
#: rarest words, within ``match_budget`` matches (a chunk sharing only common words with
#: the change scores little, and reading every chunk of a large repository's for them
#: costs more than the rest of the retrieval; bench/RESULTS.md).
CODE_LIMITS = LexicalLimits(frequent_share=0.35, match_budget=1000)
#: A PR's queries share this many matches (each keeps at least ``CODE_MIN_MATCHES``): the
#: statement's time grows with the matches read (bench/RESULTS.md).
CODE_PR_MATCHES = 5_000
CODE_MIN_MATCHES = 100
#: The hits each query keeps (at least): summed over a PR's functions
#: (``candidates._add_summed``), a chunk ranked 60th for each of three functions can be
#: the change's best match.
CODE_HITS = 100


def code_query(
    words: Sequence[str], counts: WordCounts, limits: LexicalLimits = CODE_LIMITS
) -> tuple[list[str], list[str]]:
    """The words a query scores with, and the rarer of them that choose the chunks
    scored (``CODE_LIMITS``); in a repository not counted (small), every word both. Pure."""
    if not counts.total:
        return sorted(set(words)), sorted(set(words))
    frequent = limits.frequent_share * counts.total
    kept = sorted(w for w in set(words) if counts.chunks(w) <= frequent)
    matching: list[str] = []
    matched = 0
    for word in sorted(kept, key=lambda w: (counts.chunks(w), w)):
        matched += counts.chunks(word)
        if matching and matched > limits.match_budget:
            break
        matching.append(word)
    return kept, sorted(matching)


def code_word_scores(
    conn: Connection,
    repo_id: int,
    codes: Sequence[str],
    exclude: Sequence[int],
    k: int,
    limits: LexicalLimits = CODE_LIMITS,
    counted: WordCountPolicy = DEFAULT_WORD_COUNTS,
    paths: Sequence[str] | None = None,
) -> Scored:
    """For each piece of code (a changed function's, or a question), the chunks whose code
    shares its words, ranked by Okapi BM25 over the words of the chunks' code
    (``code_tsv``): what the author may have to change too uses the same rare names. A
    query with a path (its function's file) leaves that file's chunks out: they share the
    file's names whether or not they relate to the change (with them, the co-change
    benchmark's first hits got much worse; the structural signal still finds what the
    change calls there). The words of every query in one statement, their counts in
    another, then all the queries in one (``_CODE_WORDS``), over the chunks
    ``code_query`` chooses."""
    if not any(code.strip() for code in codes):
        return [[] for _ in codes]
    words_of: list[list[str]] = [[] for _ in codes]
    for ordinal, word in conn.execute(text(_WORDS_OF_CODE), {"qs": list(codes)}):
        words_of[ordinal - 1].append(word)
    every = {w for words in words_of for w in words}
    counts = word_counts(conn, repo_id, every, counted, table="repository_code_words")
    if len(codes) > 1:
        share = max(CODE_MIN_MATCHES, CODE_PR_MATCHES // len(codes))
        limits = replace(limits, match_budget=min(limits.match_budget, share))
    chosen = [code_query(words, counts, limits) for words in words_of]
    if not any(matching for _, matching in chosen):
        return [[] for _ in codes]
    files = list(paths) if paths is not None else [""] * len(codes)
    return _bm25(
        conn,
        _CODE_WORDS,
        repo_id,
        [(kept, matching, path) for (kept, matching), path in zip(chosen, files, strict=True)],
        counts.counts,  # the counted ones of the queries' words
        exclude,
        k,
        counts.documents,
        counts.code_average_length,
    )


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
