"""Pure parts of retrieval: queries, evidence, ranking, packing."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.diff.changed import changed_functions
from app.diff.parse import parse_diff
from app.indexing.links import IMPORTED, NAME_ONLY, RECEIVER_GUESS
from app.llm.tokens import estimate_tokens
from app.retrieval.context_chunk import ContextChunk
from app.retrieval.evidence import Evidence, merge_evidence
from app.retrieval.links import UNIQUE_NAME, link_score
from app.retrieval.natural_queries import diff_identifiers, heuristic_queries
from app.retrieval.ranking import pack, rank_context
from app.retrieval.retrieve import block_cost
from app.retrieval.weights import (
    OUTLINE_WEIGHT,
    QUESTION_WEIGHTS,
    RankingWeights,
    question_score,
)
from app.review.context_blocks import render_context_block
from tests.support.billing import DIFF, NEW, OLD

_COST = block_cost(render_context_block, estimate_tokens)


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


def _chunk(
    cid: int, path: str, start: int, end: int, score: float, code: str = "x", **evidence: float
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
        evidence=Evidence(**evidence) if evidence else Evidence(lexical=score),  # type: ignore[arg-type]
    )


def test_evidence_of_several_functions_keeps_the_best_of_each_signal() -> None:
    merged = merge_evidence(
        [
            {7: Evidence(vector=0.5), 9: Evidence(callee=0.8)},
            {7: Evidence(lexical=0.25), 8: Evidence(lexical=0.1), 9: Evidence(caller=0.6)},
        ]
    )
    assert merged[7] == Evidence(vector=0.5, lexical=0.25, found_for=2)
    assert merged[7].signals == ("lexical", "vector")
    assert merged[8].found_for == 1 and merged[8].link == 0
    assert merged[9].link == 0.8 and merged[9].found_for == 2


def test_one_score_weighs_every_kind_of_evidence() -> None:
    weights = RankingWeights(
        link=1.0, cochange=0.5, sibling=0.25, lexical=0.2, vector=0.1, shared=0.05
    )
    evidence = Evidence(callee=0.8, cochange=0.4, sibling=1.0, lexical=1.0, vector=0.5, found_for=3)
    assert weights.score(evidence) == pytest.approx(0.8 + 0.2 + 0.25 + 0.2 + 0.05 + 0.1)
    assert weights.score(Evidence(caller=0.9)) > weights.score(Evidence(lexical=1.0, vector=1.0))


def test_each_item_says_why_it_is_there() -> None:
    evidence = Evidence(callee=0.9, cochange=0.5, together=3, sibling=0.6, sibling_kind="pair")
    assert evidence.reasons() == [
        "called by the change",
        "the other half of a pair",
        "changed together 3 times",
    ]
    assert Evidence(caller=0.5, cochange=0.1, together=1).reasons() == [
        "calls the changed code",
        "changed together once",
    ]
    block = render_context_block(_chunk(1, "a.py", 1, 2, 1.0, caller=0.5))
    assert "\nWhy: calls the changed code.\n" in block


def test_the_words_signal_is_merged_weighed_and_said() -> None:
    merged = merge_evidence([{4: Evidence(words=0.3)}, {4: Evidence(words=0.9, lexical=0.2)}])
    assert merged[4].words == 0.9 and merged[4].signals == ("lexical", "words")
    assert merged[4].scaled(0.5).words == 0.45
    alone = RankingWeights(words=0.5, coupled_words=0.25, lexical=0.0)
    assert alone.score(merged[4]) == pytest.approx(0.45)
    coupled = replace(merged[4], cochange=0.1)  # history found it too: its words weigh more
    assert alone.score(coupled) == pytest.approx(0.9 * 0.75 + 0.2 * 0.1)
    assert merged[4].reasons() == ["uses the same words", "shares names"]
    assert not merged[4].specific  # only looking alike: capped per file like lexical hits


def test_code_before_tests_and_docs_and_by_score_within() -> None:
    lexical_best = _chunk(1, "pkg/a.py", 1, 5, 0.9)
    linked = _chunk(2, "pkg/b.py", 1, 5, 0.4, callee=0.4)
    better_link = _chunk(3, "pkg/c.py", 1, 5, 1.2, callee=0.9)
    linked_test = replace(_chunk(4, "tests/test_b.py", 1, 5, 2.0, callee=1.0), secondary=True)
    ranked = rank_context([lexical_best, linked, better_link, linked_test], max_per_file=3)
    # by score alone, linked or not; the test after all code, whatever its score
    assert [c.chunk_id for c in ranked] == [3, 1, 2, 4]


def test_related_chunks_are_neither_capped_nor_counted_per_file() -> None:
    """The cap is on chunks that only look alike: five related chunks of a file leave
    room for two look-alikes of it, and not three."""
    related = [
        _chunk(i, "a.py", i * 10, i * 10 + 5, 0.5, **{kind: 0.5})
        for i, kind in enumerate(("callee", "caller", "cochange", "sibling", "callee"))
    ]
    alike = [_chunk(i, "a.py", i * 10, i * 10 + 5, 0.4 - i / 100) for i in (10, 11, 12)]
    ranked = rank_context([*related, *alike], max_per_file=2)
    assert sorted(c.chunk_id for c in ranked) == [0, 1, 2, 3, 4, 10, 11]


def test_look_alikes_scoring_higher_come_before_linked_code() -> None:
    """No share is kept for linked code: look-alikes scoring higher than every linked
    chunk all come first (the score already weighs the link), and a test comes after all
    code, however high its score."""
    alike = [_chunk(i, f"alike{i}.py", 1, 5, 0.9 - i / 100, code="x" * 40) for i in range(4)]
    linked = [_chunk(i, f"linked{i}.py", 1, 5, 0.2, code="x" * 40, callee=0.5) for i in (10, 11)]
    test = replace(_chunk(20, "tests/test_a.py", 1, 5, 5.0, callee=1.0), secondary=True)
    ranked = rank_context([*linked, test, *alike], max_per_file=3)
    assert [c.chunk_id for c in ranked] == [0, 1, 2, 3, 10, 11, 20]


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


def test_a_headed_window_overlaps_other_chunks_only_where_its_own_lines_are() -> None:
    """A window under its definition's signature starts at the definition's first line;
    the definition's other windows are the same item (the best is kept), but a method
    it spans without showing is not."""

    def window(cid: int, start: int, end: int, score: float, shown: int = 0) -> ContextChunk:
        chunk = replace(_chunk(cid, "a.py", start, end, score), chunk_type="window")
        return replace(chunk, qualified_name="Big", window_from=shown)

    chunks = [
        window(1, 10, 140, 0.9, shown=100),  # lines 100-140, headed from line 10
        window(2, 10, 49, 0.8),  # the definition's first window
        window(3, 10, 90, 0.7, shown=60),
        _chunk(4, "a.py", 50, 70, 0.6),  # a method in lines the best window does not show
        _chunk(5, "a.py", 120, 130, 0.5),  # in its lines: shown already
    ]
    assert [c.chunk_id for c in rank_context(chunks, 5)] == [1, 4]


def test_pack_skips_what_does_not_fit_and_takes_smaller_after() -> None:
    big = _chunk(1, "a.py", 1, 9, 0.9, code="x" * 3000)
    small = _chunk(2, "b.py", 1, 2, 0.5, code="y = 1")
    packed, used = pack([big, small], budget=200, cost_of=_COST)
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
    packed, used = pack(ranked, budget, _COST)
    assert used <= budget
    assert used == sum(c.tokens for c in packed)
    assert pack(ranked, budget, _COST) == (packed, used)
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


def test_the_words_of_the_whole_change_sum_over_its_functions() -> None:
    """Each function's best match is not 1.0 by itself: a chunk matching two changed
    functions outranks what matches one of them better, and every function that found
    a chunk records the same share of the change's best sum."""
    from app.retrieval.candidates import _add_summed

    found: list[dict[int, dict[str, float | str]]] = [{}, {}, {}]
    scored = [[(1, 2.0), (2, 1.5)], [(2, 2.5), (3, 0.5)], [(4, 0.4)]]
    _add_summed(found, scored, "words", [[0], [1], [2]])
    assert found[0] == {1: {"words": 0.5}, 2: {"words": 1.0}}
    assert found[1] == {2: {"words": 1.0}, 3: {"words": 0.125}}
    assert found[2] == {4: {"words": 0.1}}  # a small function's best stays small
    nothing: list[dict[int, dict[str, float | str]]] = [{}]
    _add_summed(nothing, [[(5, 0.0)]], "words", [[0]])
    assert nothing == [{}]


def test_a_files_diff_is_a_words_query_of_its_functions() -> None:
    """Each searched function's code is a query, and so is each touched file's diff (its
    removed and context lines too), recorded for every searched function of that file;
    a file with no searched function asks nothing."""
    from app.retrieval.candidates import _add_summed, word_queries

    diffs, [function] = _changed()
    other = parse_diff(
        b"diff --git a/pkg/b.py b/pkg/b.py\n--- a/pkg/b.py\n+++ b/pkg/b.py\n"
        b"@@ -1,2 +1,2 @@\n import os\n-X = 1\n+X = 2\n"
    )
    assert other[0].text == "import os\nX = 1\nX = 2"  # every line, without its mark
    codes, paths, owners = word_queries([function, function], [*diffs, *other])
    assert codes[:2] == [function.chunk.raw_code] * 2
    assert codes[2] == diffs[0].text and "gateway.charge" in codes[2]  # the removed call
    assert len(codes) == 3 and paths == [diffs[0].path] * 3 and owners == [[0], [1], [0, 1]]
    found: list[dict[int, dict[str, float | str]]] = [{}, {}]
    _add_summed(found, [[(7, 1.0)], [], [(7, 1.0), (8, 0.5)]], "words", owners)
    assert found[0] == {7: {"words": 1.0}, 8: {"words": 0.25}}
    assert found[1] == {7: {"words": 1.0}, 8: {"words": 0.25}}


@pytest.mark.parametrize(
    ("path", "secondary"),
    [
        ("tests/test_billing.py", True),
        ("src/billing/billing_test.go", True),
        ("docs/guide.md", True),
        ("src/components/Button.spec.tsx", True),
        ("src/ReaderTest.php", True),  # PHPUnit's, beside the code it tests
        ("Tests/RouteTest.php", True),  # a Symfony component's
        ("src/Testing/Reader.php", False),
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


def test_a_bare_name_borne_once_is_likely_its_definition_and_namesakes_share_it() -> None:
    assert link_score(NAME_ONLY, 1) == pytest.approx(UNIQUE_NAME)
    assert link_score(NAME_ONLY, 1) > link_score(RECEIVER_GUESS, 1)
    # which of four namesakes is called is unknown: each says half as much
    assert link_score(NAME_ONLY, 4) == pytest.approx(UNIQUE_NAME / 2)
    assert link_score(NAME_ONLY, 6) < link_score(RECEIVER_GUESS, 1) / 2
    # a resolved link reaching several definitions (overloads) is shared alike
    assert link_score(IMPORTED, 4) == pytest.approx(IMPORTED / 2)
    # a bare name followed through a re-export keeps its decay
    assert link_score(NAME_ONLY * 0.95, 1) == pytest.approx(UNIQUE_NAME * 0.95)


def test_a_question_weighs_an_outline_at_a_share_and_a_definition_whole() -> None:
    evidence = Evidence(lexical=0.8, vector=0.5, words=1.0)
    whole = QUESTION_WEIGHTS.score(evidence)
    assert whole > 0
    for kind in ("function", "method", "window"):
        assert question_score(QUESTION_WEIGHTS, evidence, kind) == whole
    for kind in ("class", "module"):
        assert question_score(QUESTION_WEIGHTS, evidence, kind) == whole * OUTLINE_WEIGHT
    assert 0 < OUTLINE_WEIGHT < 1
