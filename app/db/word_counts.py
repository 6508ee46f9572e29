"""How many of a repository's chunks its common words occur in, for the full-text
signal to choose a query's words by (``app/retrieval/full_text.py``).

``ts_rank`` weighs every matching word alike (there is no inverse document frequency),
and every chunk a query matches is fetched and ranked: on zod a full-text query of about
40 words matched 8,000 of its 12,131 chunks, and ranking them was most of a review's
database time. Knowing each word's count, a query keeps its rarer words and a bounded
number of matches. The counts come from ``ts_stat`` in the index run, again only when
the repository's chunk count has moved by more than ``recount_change`` since the last
count. Only words in more than ``stored_min`` chunks are stored (``repository_words``);
any other word is taken to be in ``stored_min`` (``WordCountPolicy``). The words of the
chunks' code (``code_tsv``, the ``words`` signal) are counted alike, in
``repository_code_words``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from sqlalchemy import Connection, text


@dataclass(frozen=True)
class WordCountPolicy:
    #: repositories smaller than this are not counted: every query keeps every word
    min_chunks: int = 1000
    #: words in at most this many chunks are not stored
    stored_min: int = 20
    #: count again once the chunk count has changed by this share
    recount_change: float = 0.1


DEFAULT_WORD_COUNTS = WordCountPolicy()
#: Words in at most this many chunks are not stored (the default policy's).
STORED_MIN = DEFAULT_WORD_COUNTS.stored_min


@dataclass(frozen=True)
class WordCounts:
    """Chunks per word, for the words asked about, as counted at ``total`` chunks (0: not
    counted, the repository is small); and, for BM25, the repository's chunks and their
    average number of distinct words, as of its last index run."""

    total: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)
    documents: int = 0
    average_length: float = 0.0
    stored_min: int = STORED_MIN  # a word not stored is in at most this many chunks
    #: the chunks' average number of distinct words of code (``code_tsv``)
    code_average_length: float = 0.0

    def chunks(self, word: str) -> int:
        return self.counts.get(word, self.stored_min)


#: A repository whose words were not counted (a small one).
NOT_COUNTED = WordCounts()


#: Where each kind of word is counted: names, references and summaries; the code's words.
COUNTED_IN = ("repository_words", "repository_code_words")


def needs_count(total: int, counted_at: int, policy: WordCountPolicy = DEFAULT_WORD_COUNTS) -> bool:
    if total < policy.min_chunks:
        return counted_at != 0
    return counted_at == 0 or abs(total - counted_at) > policy.recount_change * counted_at


def refresh_word_counts(
    conn: Connection,
    repo_id: int,
    total: int,
    force: bool = False,
    policy: WordCountPolicy = DEFAULT_WORD_COUNTS,
) -> None:
    """Count the repository's words again if its size moved enough (``force``: whatever
    it did, as after its summaries, which are searched too, were all replaced)."""
    counted_at, documents = conn.execute(
        text("SELECT words_counted_at, search_chunks FROM repositories WHERE id = :r"),
        {"r": repo_id},
    ).one()
    small = total < policy.min_chunks
    if force or (documents != total and (small or needs_count(total, counted_at, policy))):
        conn.execute(
            text(
                "UPDATE repositories r SET search_chunks = :t, search_avg_words ="
                " coalesce(a.search, 0), code_avg_words = coalesce(a.code, 0)"
                " FROM (SELECT avg(length(search_tsv)) AS search, avg(length(code_tsv)) AS code"
                "  FROM code_chunks WHERE repository_id = :r) a WHERE r.id = :r"
            ),
            {"t": total, "r": repo_id},
        )
    if not force and not needs_count(total, counted_at, policy):
        return
    for table, column in zip(COUNTED_IN, ("search_tsv", "code_tsv"), strict=True):
        conn.execute(text(f"DELETE FROM {table} WHERE repository_id = :r"), {"r": repo_id})
        if not small:
            conn.execute(
                text(
                    f"INSERT INTO {table} (repository_id, word, chunks)"
                    f" SELECT :r, word, ndoc FROM ts_stat(format('SELECT {column} FROM"
                    " code_chunks WHERE repository_id = %s', CAST(:r AS bigint))) WHERE ndoc > :n"
                ),
                {"r": repo_id, "n": policy.stored_min},
            )
    conn.execute(
        text("UPDATE repositories SET words_counted_at = :t WHERE id = :r"),
        {"t": 0 if small else total, "r": repo_id},
    )


def word_counts(
    conn: Connection,
    repo_id: int,
    words: Collection[str],
    policy: WordCountPolicy = DEFAULT_WORD_COUNTS,
    table: str = "repository_words",
) -> WordCounts:
    """The counts of ``words`` in the repository's chunks, in one statement (counted under
    ``policy``, as the index run that counted them), from ``table`` (``COUNTED_IN``)."""
    if table not in COUNTED_IN:
        raise ValueError(f"words are not counted in {table}")
    rows = conn.execute(
        text(
            "SELECT r.words_counted_at, r.search_chunks, r.search_avg_words, r.code_avg_words,"
            " w.word, w.chunks"
            f" FROM repositories r LEFT JOIN {table} w ON w.repository_id = r.id"
            " AND w.word = ANY(CAST(:w AS text[])) WHERE r.id = :r"
        ),
        {"r": repo_id, "w": sorted(words)},
    ).all()
    if not rows:
        return NOT_COUNTED
    counted_at, documents, average, code_average = rows[0][:4]
    counts = {word: n for *_, word, n in rows if word is not None} if counted_at else {}
    return WordCounts(
        counted_at, counts, documents, float(average), policy.stored_min, float(code_average)
    )
