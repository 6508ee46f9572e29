"""How many of a repository's chunks its common words occur in, for the full-text
signal to choose a query's words by (``app/retrieval/signals.py``).

``ts_rank`` weighs every matching word alike (there is no inverse document frequency),
and every chunk a query matches is fetched and ranked: on zod a full-text query of about
40 words matched 8,000 of its 12,131 chunks, and ranking them was most of a review's
database time. Knowing each word's count, a query keeps its rarer words and a bounded
number of matches. The counts come from ``ts_stat`` in the index run, again only when
the repository's chunk count has moved by more than ``RECOUNT_CHANGE`` since the last
count. Only words in more than ``STORED_MIN`` chunks are stored (``repository_words``);
any other word is taken to be in ``STORED_MIN``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from sqlalchemy import Connection, text

#: Repositories smaller than this are not counted: every query keeps every word.
MIN_CHUNKS = 1000
#: Words in at most this many chunks are not stored.
STORED_MIN = 20
#: Count again once the chunk count has changed by this share.
RECOUNT_CHANGE = 0.1


@dataclass(frozen=True)
class WordCounts:
    """Chunks per word, for the words asked about, as counted at ``total`` chunks (0: not
    counted, the repository is small); and, for BM25, the repository's chunks and their
    average number of distinct words, as of its last index run."""

    total: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)
    documents: int = 0
    average_length: float = 0.0

    def chunks(self, word: str) -> int:
        return self.counts.get(word, STORED_MIN)


#: A repository whose words were not counted (a small one).
NOT_COUNTED = WordCounts()


def needs_count(total: int, counted_at: int) -> bool:
    if total < MIN_CHUNKS:
        return counted_at != 0
    return counted_at == 0 or abs(total - counted_at) > RECOUNT_CHANGE * counted_at


def refresh_word_counts(conn: Connection, repo_id: int, total: int, force: bool = False) -> None:
    """Count the repository's words again if its size moved enough (``force``: whatever
    it did, as after its summaries, which are searched too, were all replaced)."""
    counted_at, documents = conn.execute(
        text("SELECT words_counted_at, search_chunks FROM repositories WHERE id = :r"),
        {"r": repo_id},
    ).one()
    if force or (documents != total and (total < MIN_CHUNKS or needs_count(total, counted_at))):
        conn.execute(
            text(
                "UPDATE repositories SET search_chunks = :t, search_avg_words = coalesce("
                " (SELECT avg(length(search_tsv)) FROM code_chunks WHERE repository_id = :r),"
                " 0) WHERE id = :r"
            ),
            {"t": total, "r": repo_id},
        )
    if not force and not needs_count(total, counted_at):
        return
    conn.execute(text("DELETE FROM repository_words WHERE repository_id = :r"), {"r": repo_id})
    if total >= MIN_CHUNKS:
        conn.execute(
            text(
                "INSERT INTO repository_words (repository_id, word, chunks)"
                " SELECT :r, word, ndoc FROM ts_stat(format('SELECT search_tsv FROM code_chunks"
                " WHERE repository_id = %s', CAST(:r AS bigint))) WHERE ndoc > :n"
            ),
            {"r": repo_id, "n": STORED_MIN},
        )
    conn.execute(
        text("UPDATE repositories SET words_counted_at = :t WHERE id = :r"),
        {"t": total if total >= MIN_CHUNKS else 0, "r": repo_id},
    )


def word_counts(conn: Connection, repo_id: int, words: Collection[str]) -> WordCounts:
    """The counts of ``words`` in the repository's chunks, in one statement."""
    rows = conn.execute(
        text(
            "SELECT r.words_counted_at, r.search_chunks, r.search_avg_words, w.word, w.chunks"
            " FROM repositories r LEFT JOIN repository_words w ON w.repository_id = r.id"
            " AND w.word = ANY(CAST(:w AS text[])) WHERE r.id = :r"
        ),
        {"r": repo_id, "w": sorted(words)},
    ).all()
    if not rows:
        return NOT_COUNTED
    counted_at, documents, average = rows[0][:3]
    counts = {word: n for *_, word, n in rows if word is not None} if counted_at else {}
    return WordCounts(counted_at, counts, documents, float(average))
