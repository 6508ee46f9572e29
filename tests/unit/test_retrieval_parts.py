"""Pure parts of retrieval: queries, fusion, ranking, packing."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.diff.changed import changed_functions
from app.diff.parse import parse_diff
from app.llm.tokens import estimate_tokens
from app.retrieval.fusion import interleave, reciprocal_rank_fusion
from app.retrieval.queries import diff_identifiers, heuristic_queries
from app.retrieval.ranking import (
    LINK_SHARED_BONUS,
    ContextChunk,
    FunctionScores,
    merge_function_scores,
    pack,
    rank_context,
)

DIFF = """diff --git a/billing.py b/billing.py
--- a/billing.py
+++ b/billing.py
@@ -1,2 +1,2 @@
 def charge(customer, amount):
-    return gateway.charge(customer.card, amount)
+    return payments_client.capture(customer.card_token, amount)
"""
OLD = b"def charge(customer, amount):\n    return gateway.charge(customer.card, amount)\n"
NEW = (
    b"def charge(customer, amount):\n"
    b"    return payments_client.capture(customer.card_token, amount)\n"
)


def _changed():  # type: ignore[no-untyped-def]
    diffs = parse_diff(DIFF)
    return diffs, changed_functions(diffs, lambda path, side: NEW if side == "new" else OLD)


def test_queries_describe_the_function_and_the_change() -> None:
    diffs, [function] = _changed()
    added, removed = diff_identifiers(function, diffs[0])
    assert added == ["payments_client", "capture", "card_token"]
    assert removed == ["gateway", "charge", "card"]  # gateway.charge(...) is gone
    hyde, change = heuristic_queries(function, diffs[0])
    assert hyde.view == "hyde" and hyde.text.startswith("Function charge in billing.py (python).")
    assert change.text.startswith("Changes function charge in billing.py.")
    assert "Now uses payments_client, capture, card_token." in change.text
    assert "No longer uses gateway, charge, card." in change.text
    assert "About capture card charge client gateway payments token." in change.text


def test_rrf_rewards_agreement_between_signals() -> None:
    scores = reciprocal_rank_fusion({"vector": [1, 2, 3], "lexical": [3, 4], "structural": [3]})
    assert max(scores, key=scores.__getitem__) == 3
    assert scores[1] == 1 / 61
    assert scores[3] == 1 / 63 + 1 / 61 + 1 / 61


def test_interleave_takes_lists_in_turn() -> None:
    scores = interleave({"a": [1, 2], "b": [3, 1, 4]})
    assert sorted(scores, key=lambda k: -scores[k]) == [1, 3, 2, 4]


def _chunk(
    cid: int, path: str, start: int, end: int, score: float, code: str = "x"
) -> ContextChunk:
    return ContextChunk(
        cid,
        path,
        start,
        end,
        f"f{cid}",
        f"f{cid}",
        "function",
        "python",
        "summary",
        code,
        score=score,
    )


def test_merge_counts_functions_and_sums_scores() -> None:
    merged = merge_function_scores(
        [
            FunctionScores({7: 0.5}, {9: 0.8}, {7: {"vector"}, 9: {"structural"}}),
            FunctionScores({7: 0.25, 8: 0.1}, {9: 0.6}, {7: {"lexical"}}),
        ]
    )
    assert merged[7].score == 0.75 and merged[7].found_for == 2
    assert merged[7].signals == {"vector", "lexical"}
    assert merged[8].found_for == 1 and merged[8].link_score == 0
    # the best link, plus a bonus for the second function linked to it
    assert merged[9].link_score == pytest.approx(0.8 + LINK_SHARED_BONUS)


def test_links_rank_first_and_code_before_tests_and_docs() -> None:
    fused_best = _chunk(1, "pkg/a.py", 1, 5, 0.9)
    linked = replace(_chunk(2, "pkg/b.py", 1, 5, 0.0), link_score=0.4)
    better_link = replace(_chunk(3, "pkg/c.py", 1, 5, 0.0), link_score=0.9)
    linked_test = replace(_chunk(4, "tests/test_b.py", 1, 5, 0.5), link_score=1.0, secondary=True)
    ranked = rank_context([fused_best, linked, better_link, linked_test], max_per_file=3)
    assert [c.chunk_id for c in ranked] == [3, 2, 1, 4]


def test_linked_chunks_are_not_capped_per_file() -> None:
    chunks = [replace(_chunk(i, "a.py", i * 10, i * 10 + 5, 0.0), link_score=0.5) for i in range(5)]
    chunks.append(_chunk(9, "a.py", 100, 105, 0.9))  # unlinked: the cap counts linked ones too
    ranked = rank_context(chunks, max_per_file=2)
    assert [c.chunk_id for c in ranked] == [0, 1, 2, 3, 4]


def test_rank_dedups_overlaps_and_caps_per_file() -> None:
    chunks = [
        _chunk(1, "a.py", 1, 20, 0.9),
        _chunk(2, "a.py", 10, 30, 0.8),  # overlaps 1: dropped
        _chunk(3, "a.py", 40, 50, 0.7),
        _chunk(4, "a.py", 60, 70, 0.6),  # third of a.py: over the cap of 2
        _chunk(5, "b.py", 1, 5, 0.65),
    ]
    ranked = rank_context(chunks, max_per_file=2)
    assert [c.chunk_id for c in ranked] == [1, 3, 5]


def test_pack_skips_what_does_not_fit_and_takes_smaller_after() -> None:
    big = _chunk(1, "a.py", 1, 9, 0.9, code="x" * 3000)
    small = _chunk(2, "b.py", 1, 2, 0.5, code="y = 1")
    packed, used = pack([big, small], budget=200, count_tokens=estimate_tokens)
    assert [c.chunk_id for c in packed] == [2]
    assert 0 < used <= 200 and packed[0].tokens == used


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 4000), st.floats(0, 1)), max_size=30),
    st.integers(0, 5000),
)
def test_pack_never_exceeds_budget_and_is_deterministic(
    sizes: list[tuple[int, float]], budget: int
) -> None:
    chunks = [
        _chunk(i, f"f{i}.py", 1, 2, score, code="z" * size) for i, (size, score) in enumerate(sizes)
    ]
    ranked = rank_context(chunks, max_per_file=3)
    packed, used = pack(ranked, budget, estimate_tokens)
    assert used <= budget
    assert used == sum(c.tokens for c in packed)
    assert pack(ranked, budget, estimate_tokens) == (packed, used)
    assert [replace(c, tokens=0) for c in packed] == [
        c for c in ranked if c in [replace(p, tokens=0) for p in packed]
    ]


def test_most_changed_keeps_the_biggest_changes_in_diff_order() -> None:
    from app.diff.changed import ChangedFunction
    from app.retrieval.retrieve import most_changed

    _, [function] = _changed()
    many = [
        ChangedFunction(f"f{i}.py", "modified", function.chunk, tuple(range(n)), ())
        for i, n in enumerate([1, 5, 2, 9, 3])
    ]
    assert [c.file_path for c in most_changed(many, 2)] == ["f1.py", "f3.py"]
    assert most_changed(many, 10) == many


@pytest.mark.parametrize(
    ("path", "secondary"),
    [
        ("tests/test_billing.py", True),
        ("src/billing/billing_test.go", True),
        ("docs/guide.md", True),
        ("src/components/Button.spec.tsx", True),
        ("src/billing/charge.py", False),
        ("src/testament/notes.py", False),  # "test/" is a directory, not a prefix
    ],
)
def test_secondary_paths_match_like_gitignore(path: str, secondary: bool) -> None:
    from app.config import SECONDARY_PATHS
    from app.retrieval.retrieve import secondary_paths

    is_secondary = secondary_paths(SECONDARY_PATHS)
    assert is_secondary(path) is secondary
    assert is_secondary(path) is secondary  # a second ask, answered from the first


def test_secondary_paths_keep_gitignore_negation_and_differ_by_patterns() -> None:
    from app.retrieval.retrieve import secondary_paths

    prose_but_readme = secondary_paths(("*.md", "!README.md"))
    assert prose_but_readme("docs/guide.md") is True
    assert prose_but_readme("README.md") is False
    assert secondary_paths(("*.md",))("README.md") is True
