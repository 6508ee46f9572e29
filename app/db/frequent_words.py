"""The words that occur in many of a repository's chunks, which lexical queries leave out.

``ts_rank`` weighs every matching word alike (there is no inverse document frequency),
so a word found in most chunks adds matches to rank and nothing to the order: on zod a
full-text query of about 40 words matched 8,000 of its 12,131 chunks, and ranking them
was most of a review's database time. Words in more than ``FREQUENT_SHARE`` of the
chunks are counted by the index run (``ts_stat``), again only when the repository's
chunk count has moved by more than ``RECOUNT_CHANGE`` since the last count.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

#: A word in more than this share of a repository's chunks is left out of its queries.
FREQUENT_SHARE = 0.05
#: Repositories smaller than this keep every word (ranking them all is cheap).
MIN_CHUNKS = 1000
#: Count again once the chunk count has changed by this share.
RECOUNT_CHANGE = 0.1


def needs_count(total: int, counted_at: int) -> bool:
    if total < MIN_CHUNKS:
        return counted_at != 0
    return counted_at == 0 or abs(total - counted_at) > RECOUNT_CHANGE * counted_at


def refresh_frequent_words(conn: Connection, repo_id: int, total: int) -> None:
    """Count the repository's frequent words again if its size moved enough."""
    counted_at = conn.execute(
        text("SELECT frequent_words_chunks FROM repositories WHERE id = :r"), {"r": repo_id}
    ).scalar_one()
    if not needs_count(total, counted_at):
        return
    words: list[str] = []
    if total >= MIN_CHUNKS:
        words = list(
            conn.execute(
                text(
                    "SELECT word FROM ts_stat(format('SELECT search_tsv FROM code_chunks"
                    " WHERE repository_id = %s', CAST(:r AS bigint)))"
                    " WHERE ndoc > :n ORDER BY word"
                ),
                {"r": repo_id, "n": FREQUENT_SHARE * total},
            ).scalars()
        )
    conn.execute(
        text(
            "UPDATE repositories SET frequent_words = :w, frequent_words_chunks = :t WHERE id = :r"
        ),
        {"w": words, "t": total if total >= MIN_CHUNKS else 0, "r": repo_id},
    )


def frequent_words(conn: Connection, repo_id: int) -> frozenset[str]:
    found: Sequence[str] = (
        conn.execute(
            text("SELECT frequent_words FROM repositories WHERE id = :r"), {"r": repo_id}
        ).scalar()
        or ()
    )
    return frozenset(found)
