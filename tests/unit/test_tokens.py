"""Exact token counts offline: quicktok against tiktoken's own BPE on the same ranks."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import quicktok
import tiktoken
from tiktoken_ext import openai_public

from app.llm.tokens import estimate_tokens, token_counter

SAMPLE_ROOT = Path(__file__).parents[2] / "app"


@functools.cache
def _tiktoken_from_quicktok_ranks(name: str) -> tiktoken.Encoding:
    """tiktoken's encoder (its regex and BPE) over the ranks shipped in quicktok's wheel:
    tiktoken cannot download its own files here."""
    source = quicktok.get_encoding(name)
    spec = getattr(openai_public, name)
    ranks = {}
    for rank in range(source.n_vocab):
        if not source.is_special_token(rank):
            try:
                ranks[source.decode_single_token_bytes(rank)] = rank
            except (KeyError, ValueError):  # unassigned ids between the ranks and specials
                continue
    pattern = {
        "o200k_base": "pat_str",
        "cl100k_base": "pat_str",
    }[name]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: ranks)
        info = spec()
    return tiktoken.Encoding(
        name=name,
        pat_str=info[pattern],
        mergeable_ranks=ranks,
        special_tokens=info["special_tokens"],
    )


def _samples() -> list[str]:
    texts = [p.read_text() for p in sorted(SAMPLE_ROOT.rglob("*.py"))][:40]
    texts += [
        "naïve café — 東京 🚀 d'être 'll\r\n\t  x",
        "  \n\n   trailing spaces and\ttabs\t\n",
        "<|endoftext|> is text here, not a special token",
        "x" * 5000,
    ]
    return texts


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_quicktok_counts_match_tiktoken(name: str) -> None:
    reference = _tiktoken_from_quicktok_ranks(name)
    exact = quicktok.get_encoding(name)
    for text in _samples():
        assert exact.encode_ordinary(text) == reference.encode_ordinary(text)


def test_the_counter_is_exact_offline() -> None:
    counter = token_counter()
    assert counter.name in {"tiktoken:o200k_base", "quicktok:o200k_base"}
    reference = _tiktoken_from_quicktok_ranks("o200k_base")
    text = (SAMPLE_ROOT / "retrieval" / "links.py").read_text()
    assert counter.count(text) == len(reference.encode_ordinary(text))


def test_the_estimate_over_counts_but_not_wildly() -> None:
    reference = _tiktoken_from_quicktok_ranks("o200k_base")
    ratios = sorted(
        estimate_tokens(t) / max(1, len(reference.encode_ordinary(t))) for t in _samples()[:40]
    )
    assert ratios[0] >= 0.95  # never (much) under: a budget must hold
    assert ratios[len(ratios) // 2] <= 2.0
