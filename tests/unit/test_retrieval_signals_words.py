"""Which words a full-text query keeps."""

from app.db.frequent_words import needs_count
from app.retrieval.signals import lexical_query


def test_frequent_words_are_left_out_unless_nothing_else_is_left() -> None:
    assert lexical_query(["dispatch_common(request)", "refund"], {"dispatch", "common"}) == (
        "refund | request"
    )
    assert lexical_query(["dispatch common"], {"dispatch", "common"}) == "common | dispatch"
    assert lexical_query(["a b", "to"]) == ""


def test_counting_again_waits_for_a_tenth_more_or_fewer_chunks() -> None:
    assert needs_count(5000, 0)
    assert not needs_count(5400, 5000) and needs_count(5600, 5000) and needs_count(4400, 5000)
    assert not needs_count(10, 0) and needs_count(10, 5000)  # shrank below the minimum
