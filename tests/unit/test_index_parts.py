"""Pure parts of the index pipeline: redaction, summaries, embeddings, matching, config."""

from dataclasses import replace
from pathlib import Path

import pytest

from app.errors import ConfigError
from app.indexing.batches import match_chunks
from app.indexing.caches import embedding_key
from app.indexing.chunker import chunk_text
from app.indexing.embedder import embedding_text, hash_vector, stored
from app.indexing.identifiers import split_identifier
from app.indexing.languages import BY_NAME
from app.indexing.source_tree import RepoConfig, parse_repo_config, walk_tree
from app.indexing.store import StoredChunk
from app.indexing.summarizer import heuristic_summary, parse_summaries
from app.llm.redact import REDACTED, redact_secrets
from app.llm.tokens import estimate_tokens

PY = BY_NAME["python"]


@pytest.mark.parametrize(
    "secret",
    [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "sk-proj-abcdefghijklmnop1234",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-123456789012-abcdefghij",
    ],
)
def test_secret_shapes_are_redacted(secret: str) -> None:
    out = redact_secrets(f"before {secret} after")
    assert secret not in out
    assert out.startswith("before ") and out.endswith(" after") and REDACTED in out


def test_assigned_passwords_and_url_passwords_are_redacted_keeping_the_code_shape() -> None:
    code = 'db_password = "correct-horse-battery"\nurl = "postgres://app:s3cretpw@db/x"\nn = 3'
    out = redact_secrets(code)
    assert "correct-horse-battery" not in out and "s3cretpw" not in out
    assert out.splitlines()[0] == f'db_password = "{REDACTED}"'
    assert out.splitlines()[2] == "n = 3"


def test_ordinary_code_is_left_alone() -> None:
    code = 'def token_count(text):\n    return len(text.split())  # token = "word"\n'
    assert redact_secrets(code) == code


def test_heuristic_summary_uses_name_docstring_signature_and_references() -> None:
    source = (
        "def refund(charge, reason):\n"
        '    """Refund a charge and notify the customer."""\n'
        "    gateway.refund(charge.id)\n"
        "    notify_customer(charge.customer, reason)\n"
    )
    [chunk] = chunk_text("billing/refunds.py", source, PY)
    summary = heuristic_summary(chunk)
    assert summary.startswith("Function refund in billing/refunds.py (python).")
    assert "Refund a charge and notify the customer." in summary
    assert "Signature: def refund(charge, reason):" in summary
    assert "notify_customer" in summary


def test_parse_summaries_tolerates_prose_and_drops_bad_items() -> None:
    answer = (
        'Sure! {"summaries": [{"id": "0", "summary": "Adds  two\\nnumbers."},'
        ' {"id": "x", "summary": "bad id"}, {"id": "2", "summary": ""}, "junk"]} Hope it helps.'
    )
    assert parse_summaries(answer) == {0: "Adds two numbers."}
    assert parse_summaries("no json here") == {}
    assert parse_summaries("{not json}") == {}


def test_split_identifier() -> None:
    assert split_identifier("parseHTTPResponse_v2") == ("parse", "http", "response", "v", "2")
    assert split_identifier("snake_case_name") == ("snake", "case", "name")


def test_hash_vectors_are_unit_length_and_lexical() -> None:
    a = hash_vector("parse the database url into a connection")
    b = hash_vector("parses database URLs for connections")
    c = hash_vector("render the invoice as html email")

    def cos(x: list[float], y: list[float]) -> float:
        return sum(p * q for p, q in zip(x, y, strict=True))

    assert len(a) == 1536 and abs(cos(a, a) - 1) < 1e-9
    assert cos(a, b) > 0.5 > cos(a, c)
    assert hash_vector("same text") == hash_vector("same text")


def test_vectors_are_stored_at_their_own_width_and_wider_ones_refused() -> None:
    assert stored([0.6, 0.8]) == [0.6, 0.8]
    assert len(stored([0.5] * 1536)) == 1536
    with pytest.raises(Exception, match="at most 1536"):
        stored([0.0] * 2000)


def test_embedding_text_is_header_and_summary_not_code() -> None:
    text = embedding_text("a/b.py", "K.m", "def m(self):", "Does m.")
    assert text == "a/b.py :: K.m\ndef m(self):\nDoes m."


def test_embedding_key_ignores_path_but_not_summary() -> None:
    assert embedding_key("h", "s") == embedding_key("h", "s")
    assert embedding_key("h", "s") != embedding_key("h", "t")


def test_match_chunks_keeps_unchanged_rows_and_moves_shifted_ones() -> None:
    old = chunk_text("m.py", "def a():\n    return 1\n\ndef b():\n    return 2\n", PY)
    new = chunk_text("m.py", "# header\n\ndef a():\n    return 1\n\ndef c():\n    return 3\n", PY)
    stored = [
        StoredChunk(i + 1, "m.py", c.content_hash, c.start_line, c.end_line)
        for i, c in enumerate(old)
    ]
    inserts, moves, deletes = match_chunks(new, stored)
    assert [c.symbol_name for c in inserts] == ["m", "c"]  # new module chunk, new function
    assert moves == [(1, 3, 4, None)]  # a() moved down two lines, same row
    assert deletes == [2]  # b() is gone


def test_match_chunks_pairs_duplicates_one_to_one() -> None:
    chunks = chunk_text("d.txt", "same\n" * 3, None)
    stored = [StoredChunk(7, "d.txt", chunks[0].content_hash, 1, 3)] * 2
    inserts, moves, deletes = match_chunks(chunks, stored)
    assert inserts == [] and moves == [] and deletes == [7]


def test_match_chunks_moves_a_kept_skeleton_whose_stretches_moved_within_it() -> None:
    """A class skeleton's code is its signatures: a body that grew by as many lines as
    another shrank leaves its first and last lines, not its stretches, where they were."""
    (chunk,) = chunk_text("s.txt", "x\n", None)
    skeleton = replace(chunk, start_line=1, end_line=9, segments=((1, 2), (5, 5), (9, 9)))
    stored = StoredChunk(4, "s.txt", skeleton.content_hash, 1, 9, [1, 2, 6, 6, 9, 9])
    inserts, moves, deletes = match_chunks([skeleton], [stored])
    assert inserts == [] and deletes == [] and moves == [(4, 1, 9, [1, 2, 5, 5, 9, 9])]
    same = replace(stored, segments=[1, 2, 5, 5, 9, 9])
    assert match_chunks([skeleton], [same]) == ([], [], [])  # not moved: not written


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[index\n", "invalid TOML"),
        ("[index]\ninclude = 'src'\n", "include must be a list of strings"),
        ("[index]\nlanguages = ['cobol']\n", "unknown languages"),
        ("[index]\nmax_file_bytes = -1\n", "max_file_bytes must be a positive integer"),
        ("[index]\nexclde = []\n", "unknown keys in \\[index\\]: exclde"),
    ],
)
def test_bad_repo_config_is_a_clear_error(toml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_repo_config(toml)


def test_walk_tree_honours_nested_gitignore_and_vendored_dirs(tmp_path: Path) -> None:
    for path in [
        "a.py",
        "keep/b.py",
        "keep/skip.tmp",
        "keep/deep/c.py",
        "node_modules/x.js",
        "dist/out.js",
        ".git/config",
    ]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("dist/\n")
    (tmp_path / "keep" / ".gitignore").write_text("*.tmp\ndeep/\n")
    found = [f.path for f in walk_tree(tmp_path, RepoConfig())]
    assert found == [".gitignore", "a.py", "keep/.gitignore", "keep/b.py"]


def test_token_estimate_counts_bpe_like_pieces() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcdefg") == 1  # up to 7 letters
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens(" return") == 1  # the space goes with the word
    assert estimate_tokens("x = f(1234)") == 7  # x, " =", " f", "(", 123, 4, ")"
    assert estimate_tokens("東京") == 3  # non-ASCII: one per two UTF-8 bytes
