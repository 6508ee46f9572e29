"""Exact token counts offline: quicktok against tiktoken's own BPE on the same ranks."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import quicktok
import tiktoken
from tiktoken_ext import openai_public

from app.indexing.files import chunk_file
from app.llm.tokens import ESTIMATE_MARGIN, estimate_tokens, token_counter

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


def test_the_estimate_is_close_at_the_median() -> None:
    """On what it counts in practice: chunks, here of this project's own code (long
    snake_case names: 1.13x; bench/token_estimate_calibration.py measures 1.09x on the
    standard library, gin and zod, against 1.7x for the estimate it replaced)."""
    reference = _tiktoken_from_quicktok_ranks("o200k_base")
    chunks = [
        c.raw_code
        for p in sorted(SAMPLE_ROOT.rglob("*.py"))
        for c in chunk_file(str(p), p.read_bytes()).chunks
    ]
    ratios = sorted(estimate_tokens(t) / max(1, len(reference.encode_ordinary(t))) for t in chunks)
    assert 0.95 <= ratios[len(ratios) // 2] <= 1.15
    assert ratios[0] >= 0.5


def test_without_a_tokenizer_budgets_keep_a_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    """When only the estimate is left, a budget is filled to ESTIMATE_MARGIN of its size,
    since the estimate under-counts some texts."""
    import builtins

    real_import = builtins.__import__

    def no_tokenizers(name: str, *args: object, **kwargs: object) -> object:
        if name in {"tiktoken", "quicktok"}:
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    token_counter.cache_clear()
    monkeypatch.setattr(builtins, "__import__", no_tokenizers)
    try:
        counter = token_counter()
    finally:
        monkeypatch.undo()
        token_counter.cache_clear()
    assert counter.name == "estimate"
    assert counter.margin == ESTIMATE_MARGIN < 1
    assert counter.usable(4000) == int(4000 * ESTIMATE_MARGIN)
    assert token_counter().usable(4000) == 4000  # exact counters spend all of it
