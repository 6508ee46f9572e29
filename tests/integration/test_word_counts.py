"""The index run counts the chunks each common word of a repository occurs in, and
full-text queries keep their rarer words by those counts, so a query matches (and ranks)
only what its rarer words match."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, text

from app.db import word_counts as wc
from app.retrieval.full_text import (
    LexicalLimits,
    bm25_score,
    lexical_scores,
    query_words,
)
from app.retrieval.vector_signal import ids as found_ids
from tests.support.indexing import index_tree

REPO = "acme/words"


#: Counted from 20 chunks, words in more than 3 of them stored: a small test repository
#: counted as a large one is.
SMALL = wc.WordCountPolicy(min_chunks=20, stored_min=3)


def index(engine: Engine, root: Path, counted: wc.WordCountPolicy = SMALL) -> int:
    index_tree(engine, root, REPO, word_counts=counted)
    with engine.connect() as conn:
        return int(
            conn.execute(
                text("SELECT id FROM repositories WHERE full_name = :n"), {"n": REPO}
            ).scalar_one()
        )


def write_functions(root: Path, count: int) -> None:
    root.mkdir(exist_ok=True)
    body = "\n\n".join(
        f"def handler_{n}(request):\n    return dispatch_common(request, {n})" for n in range(count)
    )
    (root / "handlers.py").write_text(body + "\n\n\ndef refund_invoice(order):\n    return order\n")


def names(conn: Connection, ids: list[int]) -> list[str]:
    found = conn.execute(
        text("SELECT id, symbol_name FROM code_chunks WHERE id = ANY(:ids)"), {"ids": ids}
    ).all()
    by_id = dict(found)
    return [by_id[i] for i in ids]


def test_common_words_are_counted_and_left_out_of_queries(engine: Engine, tmp_path: Path) -> None:
    write_functions(tmp_path / "repo", 40)
    repo_id = index(engine, tmp_path / "repo")
    with engine.connect() as conn:
        words = {"dispatch", "request", "refund", "nowhere"}
        counts = wc.word_counts(conn, repo_id, words, SMALL)
        assert counts.total > 40
        assert counts.counts["dispatch"] >= 40 and counts.counts["request"] >= 40
        assert "refund" not in counts.counts  # in fewer than stored_min chunks
        assert counts.chunks("refund") == 3  # taken to be in stored_min
        query = [["dispatch_common refund_invoice"]]
        [hits] = found_ids(lexical_scores(conn, repo_id, query, [], 20, counted=SMALL))
        [only_common] = found_ids(
            lexical_scores(conn, repo_id, [["dispatch_common"]], [], 5, counted=SMALL)
        )
        assert names(conn, hits) == ["refund_invoice"]  # the handlers matched common words only
    assert len(only_common) == 5  # a query of common words alone still searches


def test_a_query_keeps_its_rarest_words_within_the_budget_of_matches(
    engine: Engine, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text(
        "\n\n".join(f"def ledger_{n}():\n    return settle_ledger({n})" for n in range(30))
        + "\n\n\ndef settle_refund():\n    return refund_once()\n"
    )
    repo_id = index(engine, root)
    # only the budget decides here: no word is too frequent
    tight, roomy = LexicalLimits(1.0, match_budget=10), LexicalLimits(1.0, match_budget=100)
    with engine.connect() as conn:
        ledger = [["ledger refund"]]
        [rare_only] = found_ids(lexical_scores(conn, repo_id, ledger, [], 50, tight, SMALL))
        assert names(conn, rare_only) == ["settle_refund"]  # 'ledger' (31 chunks) was left out
        [both] = found_ids(lexical_scores(conn, repo_id, ledger, [], 50, roomy, SMALL))
        assert len(both) == 31


def test_the_count_is_redone_only_when_the_repository_grew_or_shrank_enough(
    engine: Engine, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    write_functions(root, 40)
    repo_id = index(engine, root)

    def counted_at() -> int:
        with engine.connect() as conn:
            return int(
                conn.execute(
                    text("SELECT words_counted_at FROM repositories WHERE id = :r"),
                    {"r": repo_id},
                ).scalar_one()
            )

    def stored() -> int:
        with engine.connect() as conn:
            return int(
                conn.execute(
                    text("SELECT count(*) FROM repository_words WHERE repository_id = :r"),
                    {"r": repo_id},
                ).scalar_one()
            )

    first = counted_at()
    assert first > 40 and stored() > 0
    write_functions(root, 42)  # +2 chunks: under 10%
    index(engine, root)
    assert counted_at() == first
    write_functions(root, 60)
    index(engine, root)
    assert counted_at() > first
    write_functions(root, 3)  # below the minimum: every word is kept again
    index(engine, root)
    with engine.connect() as conn:
        small = wc.word_counts(conn, repo_id, {"dispatch"}, SMALL)
    assert (small.total, small.counts) == (0, {})  # not counted: every word is kept
    assert small.documents == 4  # but BM25 still knows the repository's size
    assert counted_at() == 0 and stored() == 0


def test_the_statement_scores_each_query_as_bm25_does_in_python(
    engine: Engine, tmp_path: Path
) -> None:
    """Several queries in one statement, each chunk scored exactly as ``bm25_score`` scores
    it from the stored words, and a query's word shared with another query's counted once
    per query."""
    write_functions(tmp_path / "repo", 12)
    repo_id = index(engine, tmp_path / "repo", wc.WordCountPolicy(min_chunks=10_000))
    queries = [["refund_invoice order"], ["dispatch_common handler_3"], ["order handler_7"]]
    with engine.connect() as conn:
        scored = lexical_scores(conn, repo_id, queries, [], 50)
        rows = conn.execute(
            text(
                "SELECT c.id, u.lexeme, coalesce(array_length(u.positions, 1), 1)"
                " FROM code_chunks c, unnest(c.search_tsv) u WHERE c.repository_id = :r"
            ),
            {"r": repo_id},
        ).all()
        counts = wc.word_counts(conn, repo_id, ())
    documents: dict[int, dict[str, int]] = {}
    for chunk_id, word, tf in rows:
        documents.setdefault(chunk_id, {})[word] = tf
    df = {w: sum(w in d for d in documents.values()) for d in documents.values() for w in d}
    for query, hits in zip(queries, scored, strict=True):
        words = query_words(query)
        expected = {
            chunk_id: bm25_score(words, doc, df, counts.documents, counts.average_length)
            for chunk_id, doc in documents.items()
        }
        assert hits, query
        assert {i for i, _ in hits} == {i for i, s in expected.items() if s > 0}
        for chunk_id, score in hits:
            assert score == pytest.approx(expected[chunk_id])
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
