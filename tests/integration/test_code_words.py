"""The words signal: BM25 over the words of each chunk's code, queried with a changed
function's code. What the author forgot to change shares the change's rare names (the
decoder of the encoder's format, the other writer of the same key)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, text

from app.db import word_counts as wc
from app.db.code_words import code_words_sql
from app.retrieval.full_text import LexicalLimits, bm25_score, code_word_scores
from tests.support.indexing import index_tree

REPO = "acme/tickets"

TICKETS = """
TICKET_SEPARATOR = "|"


def encode_ticket(ticket):
    return TICKET_SEPARATOR.join([ticket.owner, ticket.seat])


def decode_ticket(raw):
    owner, seat = raw.split(TICKET_SEPARATOR)
    return Ticket(owner, seat)


def print_receipt(order):
    return format_order(order.owner)
"""

HANDLERS = "\n\n".join(
    f"def handler_{n}(request):\n    return dispatch_common(request.owner, {n})" for n in range(30)
)

WEB = """
export class HTTPClient {
  sendRequest(url: string) {
    return fetchWithRetry(url)
  }
}
"""


def index(engine: Engine, root: Path, counted: wc.WordCountPolicy) -> int:
    root.mkdir(exist_ok=True)
    (root / "tickets.py").write_text(TICKETS)
    (root / "handlers.py").write_text(HANDLERS + "\n")
    (root / "client.ts").write_text(WEB)
    index_tree(engine, root, REPO, word_counts=counted)
    with engine.connect() as conn:
        return int(
            conn.execute(
                text("SELECT id FROM repositories WHERE full_name = :n"), {"n": REPO}
            ).scalar_one()
        )


def chunk_id(conn: Connection, repo_id: int, name: str) -> int:
    return int(
        conn.execute(
            text("SELECT id FROM code_chunks WHERE repository_id = :r AND symbol_name = :n"),
            {"r": repo_id, "n": name},
        ).scalar_one()
    )


def stored_words(conn: Connection, repo_id: int) -> dict[int, dict[str, int]]:
    rows = conn.execute(
        text(
            "SELECT c.id, u.lexeme, coalesce(array_length(u.positions, 1), 1)"
            " FROM code_chunks c, unnest(c.code_tsv) u WHERE c.repository_id = :r"
        ),
        {"r": repo_id},
    ).all()
    documents: dict[int, dict[str, int]] = {}
    for cid, word, tf in rows:
        documents.setdefault(cid, {})[word] = tf
    return documents


NOT_COUNTED = wc.WordCountPolicy(min_chunks=10_000)


def test_a_chunk_stores_whole_identifiers_and_their_words(engine: Engine, tmp_path: Path) -> None:
    repo_id = index(engine, tmp_path / "repo", NOT_COUNTED)
    with engine.connect() as conn:
        documents = stored_words(conn, repo_id)
        decode = documents[chunk_id(conn, repo_id, "decode_ticket")]
        send = documents[chunk_id(conn, repo_id, "sendRequest")]
    assert {"decodeticket", "decode", "ticket", "ticketseparator", "separator"} <= decode.keys()
    assert {"sendrequest", "send", "request", "fetchwithretry", "fetch", "retry"} <= send.keys()
    assert not any("_" in word or word != word.lower() for word in decode)


def test_the_stored_words_are_the_words_a_query_makes_of_the_same_code(
    engine: Engine, tmp_path: Path
) -> None:
    """The column is made by migration 0020's frozen expression, a query's words by
    ``code_words_sql``: were they to drift apart, queries would miss what is stored."""
    repo_id = index(engine, tmp_path / "repo", NOT_COUNTED)
    with engine.connect() as conn:
        differing = conn.execute(
            text(
                "SELECT count(*) FILTER (WHERE code_tsv <> "
                f"{code_words_sql('raw_code')}), count(*) FROM code_chunks WHERE repository_id = :r"
            ),
            {"r": repo_id},
        ).one()
    assert differing[1] > 30 and differing[0] == 0


def test_the_chunk_sharing_the_changes_rare_names_ranks_first(
    engine: Engine, tmp_path: Path
) -> None:
    """The encoder changed: its decoder shares ``TICKET_SEPARATOR``, thirty handlers share
    only the common ``owner`` and ``return``."""
    repo_id = index(engine, tmp_path / "repo", NOT_COUNTED)
    with engine.connect() as conn:
        encode = chunk_id(conn, repo_id, "encode_ticket")
        decode = chunk_id(conn, repo_id, "decode_ticket")
        code = conn.execute(
            text("SELECT raw_code FROM code_chunks WHERE id = :i"), {"i": encode}
        ).scalar_one()
        [hits] = code_word_scores(conn, repo_id, [code], [encode], 10)
    assert hits[0][0] == decode
    assert encode not in {cid for cid, _ in hits}  # what the diff replaces is left out
    assert hits[0][1] > 2 * hits[-1][1]


def test_each_query_is_scored_as_bm25_does_in_python(engine: Engine, tmp_path: Path) -> None:
    """Every chunk's score from the stored words, the repository's chunk count and average
    length: the statement cannot drift from the formula."""
    repo_id = index(engine, tmp_path / "repo", NOT_COUNTED)
    codes = ["def f(ticket): return decode_ticket(ticket.owner)", "sendRequest(url)"]
    with engine.connect() as conn:
        scored = code_word_scores(conn, repo_id, codes, [], 100)
        documents = stored_words(conn, repo_id)
        counts = wc.word_counts(conn, repo_id, ())
        queries = [
            conn.execute(
                text(f"SELECT array_agg(lexeme) FROM unnest({code_words_sql(':c')})"), {"c": c}
            ).scalar_one()
            for c in codes
        ]
    assert counts.code_average_length == pytest.approx(
        sum(map(len, documents.values())) / len(documents)
    )
    df = {w: sum(w in d for d in documents.values()) for d in documents.values() for w in d}
    for words, hits in zip(queries, scored, strict=True):
        expected = {
            cid: bm25_score(words, doc, df, counts.documents, counts.code_average_length)
            for cid, doc in documents.items()
        }
        assert hits
        assert {cid for cid, _ in hits} == {cid for cid, s in expected.items() if s > 0}
        for cid, score in hits:
            assert score == pytest.approx(expected[cid])


def test_a_counted_repository_leaves_its_commonest_code_words_out(
    engine: Engine, tmp_path: Path
) -> None:
    """Counted (words in more than 3 chunks stored), ``owner`` is in most chunks: a query
    made of it alone finds nothing at a 20% share, and everything using it at 100%."""
    repo_id = index(engine, tmp_path / "repo", wc.WordCountPolicy(min_chunks=20, stored_min=3))
    with engine.connect() as conn:
        owner_chunks = sum("owner" in d for d in stored_words(conn, repo_id).values())
        assert owner_chunks > 30
        assert code_word_scores(conn, repo_id, ["owner"], [], 100) == [[]]
        everyone = LexicalLimits(frequent_share=1.0, match_budget=1000)
        [everything] = code_word_scores(conn, repo_id, ["owner"], [], 100, everyone)
    assert len(everything) == owner_chunks


def test_no_code_searches_nothing(engine: Engine, tmp_path: Path) -> None:
    repo_id = index(engine, tmp_path / "repo", NOT_COUNTED)
    with engine.connect() as conn:
        assert code_word_scores(conn, repo_id, ["", "  \n"], [], 10) == [[], []]
        assert code_word_scores(conn, repo_id, ["+-*/"], [], 10) == [[]]


def test_a_query_with_a_path_leaves_its_own_file_out(engine: Engine, tmp_path: Path) -> None:
    """The changed function's own file shares its names whatever relates to the change."""
    repo_id = index(engine, tmp_path / "repo", NOT_COUNTED)
    code = "def renew(ticket): return decode_ticket(ticket.owner)"
    with engine.connect() as conn:
        paths = dict(conn.execute(text("SELECT id, file_path FROM code_chunks")).all())
        [anywhere] = code_word_scores(conn, repo_id, [code], [], 10)
        [elsewhere] = code_word_scores(conn, repo_id, [code], [], 10, paths=["tickets.py"])
    assert paths[anywhere[0][0]] == "tickets.py"
    assert elsewhere and all(paths[cid] != "tickets.py" for cid, _ in elsewhere)
