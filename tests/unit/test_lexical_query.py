"""Which words a full-text query keeps: the rarer ones, within a budget of matches."""

from dataclasses import replace

from app.db.word_counts import STORED_MIN, WordCounts, needs_count
from app.retrieval.full_text import (
    DIFF_LIMITS,
    QUESTION_LIMITS,
    LexicalLimits,
    code_query,
    lexical_query,
)


def test_a_repository_not_counted_keeps_every_word() -> None:
    assert lexical_query(["dispatch_common(request)", "refund"]) == (
        "common | dispatch | refund | request"
    )
    assert lexical_query(["a b", "to"]) == ""


def test_frequent_words_are_left_out_unless_nothing_else_is_left() -> None:
    counts = WordCounts(5000, {"dispatch": 600, "common": 300})  # both over 5%
    assert lexical_query(["dispatch_common(request)", "refund"], counts) == "refund | request"
    assert lexical_query(["dispatch common"], counts) == "common | dispatch"


def test_the_rarest_words_are_kept_while_their_matches_fit_the_budget() -> None:
    counts = WordCounts(100_000, {"alpha": 1500, "beta": 400, "gamma": 300})
    # delta is not stored: it counts as STORED_MIN; 20 + 300 + 400 fit in 1,000, + 1500 not
    assert lexical_query(["alpha beta gamma delta"], counts) == "beta | delta | gamma"
    assert lexical_query(["alpha gamma"], counts) == "gamma"


def test_a_query_whose_rarest_word_is_over_the_budget_matches_nothing() -> None:
    counts = WordCounts(100_000, {"config": 3000, "value": 4000})
    assert lexical_query(["config value"], counts) == ""


def test_a_repository_smaller_than_the_budget_keeps_every_rare_word() -> None:
    counts = WordCounts(950, {f"word{i}": 40 for i in range(40)})  # 1,600 by the sum; 950
    assert len(lexical_query([" ".join(f"word{i}" for i in range(40))], counts).split(" | ")) == 40


def test_at_most_max_words_are_kept_and_they_are_the_rarest() -> None:
    three = replace(DIFF_LIMITS, max_words=3)
    counts = WordCounts(100_000, {"aaa": 90, "bbb": 80, "ccc": 70, "ddd": 60})
    assert lexical_query(["aaa bbb ccc ddd eee"], counts, three) == "ccc | ddd | eee"
    assert lexical_query(["aaa bbb ccc ddd eee"], limits=three) == "aaa | bbb | ccc"
    assert WordCounts(100_000).chunks("eee") == STORED_MIN


def test_counting_again_waits_for_a_tenth_more_or_fewer_chunks() -> None:
    assert needs_count(5000, 0)
    assert not needs_count(5400, 5000) and needs_count(5600, 5000) and needs_count(4400, 5000)
    assert not needs_count(10, 0) and needs_count(10, 5000)  # shrank below the minimum


def test_a_question_keeps_the_common_words_a_diff_query_leaves_out() -> None:
    # "proxy" and "support" are in 6% and 9% of the chunks: frequent for a diff's
    # identifiers, the words of a question ("add socks5h proxy support")
    counts = WordCounts(10_000, {"proxy": 600, "support": 900, "socks5h": 3, "add": 4000})
    question = ["add socks5h proxy support"]
    assert lexical_query(question, counts) == "socks5h"
    assert lexical_query(question, counts, QUESTION_LIMITS) == "proxy | socks5h | support"


def test_a_code_query_scores_with_every_word_and_matches_by_its_rarest() -> None:
    """The words signal: words in over 35% of the chunks are left out; the rest score;
    the rarest choose the chunks scored while their matches fit the budget."""
    counts = WordCounts(1000, {"self": 900, "return": 300, "request": 200, "ticket": 90})
    words = ["self", "return", "request", "ticket", "decodeticket"]
    kept, matching = code_query(words, counts, LexicalLimits(0.35, 300))
    assert kept == ["decodeticket", "request", "return", "ticket"]
    # decodeticket is not stored (at most STORED_MIN), then ticket (90): 110; request: 310
    assert matching == ["decodeticket", "ticket"]
    # the product's budget (1,000): request too, and return (610); not self (over 35%)
    assert code_query(words, counts) == (kept, ["decodeticket", "request", "return", "ticket"])
    assert code_query(
        ["request"], WordCounts(1000, {"request": 330}), LexicalLimits(0.35, 300)
    ) == (
        ["request"],
        ["request"],  # the rarest word matches even over the budget
    )


def test_a_code_query_in_a_repository_not_counted_keeps_and_matches_everything() -> None:
    assert code_query(["self", "ticket", "self"], WordCounts()) == (
        ["self", "ticket"],
        ["self", "ticket"],
    )


def test_a_questions_word_terms_drop_function_words_and_short_words() -> None:
    """In a small repository no count drops "the" or "a", which every docstring holds:
    a question's word signals search for what it is about."""
    from app.retrieval.full_text import question_terms

    assert question_terms("reduce the cost of an item by a percentage") == (
        "reduce cost item percentage"
    )
    # "Where" is a function word whatever its case; the identifier stays whole
    assert question_terms("Where is the retry_after header parsed?") == (
        "retry_after header parsed"
    )
    assert question_terms("the of by a") == ""
