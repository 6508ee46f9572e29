"""Words found in most of a repository's chunks are counted by the index run and left
out of its full-text queries, so a query matches (and ranks) only what its rarer words
match."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from app.db import frequent_words as fw
from app.indexing.embedder import HashEmbedder
from app.indexing.indexer import Indexer
from app.retrieval.signals import lexical_signals

REPO = "acme/words"


def index(engine: Engine, root: Path) -> int:
    Indexer(engine, REPO, root, embedder=HashEmbedder()).run()
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


def test_common_words_are_counted_and_left_out_of_queries(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fw, "MIN_CHUNKS", 20)
    write_functions(tmp_path / "repo", 40)
    repo_id = index(engine, tmp_path / "repo")
    with engine.connect() as conn:
        common = fw.frequent_words(conn, repo_id)
        assert {"dispatch", "common", "request"} <= common
        assert "refund" not in common and "invoice" not in common
        [hits] = lexical_signals(conn, repo_id, [["dispatch_common refund_invoice"]], [], 20)
        names = (
            conn.execute(
                text("SELECT symbol_name FROM code_chunks WHERE id = ANY(:ids)"), {"ids": hits}
            )
            .scalars()
            .all()
        )
        [only_common] = lexical_signals(conn, repo_id, [["dispatch_common"]], [], 5)
    assert names == ["refund_invoice"]  # the 40 handlers matched only on common words
    assert len(only_common) == 5  # a query of common words alone still searches


def test_the_count_is_redone_only_when_the_repository_grew_or_shrank_enough(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fw, "MIN_CHUNKS", 20)
    root = tmp_path / "repo"
    write_functions(root, 40)
    repo_id = index(engine, root)

    def counted_at() -> int:
        with engine.connect() as conn:
            return int(
                conn.execute(
                    text("SELECT frequent_words_chunks FROM repositories WHERE id = :r"),
                    {"r": repo_id},
                ).scalar_one()
            )

    first = counted_at()
    assert first > 40
    write_functions(root, 42)  # +2 chunks: under 10%
    index(engine, root)
    assert counted_at() == first
    write_functions(root, 60)
    index(engine, root)
    assert counted_at() > first
    write_functions(root, 3)  # below the minimum: every word is kept again
    index(engine, root)
    with engine.connect() as conn:
        assert fw.frequent_words(conn, repo_id) == frozenset()
    assert counted_at() == 0
