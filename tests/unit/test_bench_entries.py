"""The retrieval benchmarks score what ``context --json`` returns: an item per entry, a
headed window two, each costed by its own lines."""

from app.retrieval.context_chunk import ContextChunk
from app.retrieval.evidence import Evidence
from app.retrieval.window_heads import headed_code
from bench.recall_bench import score
from bench.recall_cases import Definition
from bench.retrieval_runner import SIGNALS, ranked

WINDOW = "\n".join(f"    total += settle(ledger, {n})" for n in range(200, 240))


def _window() -> ContextChunk:
    return ContextChunk(
        1,
        "books/ledger.py",
        10,
        239,
        "reconcile",
        "reconcile",
        "window",
        "python",
        None,
        headed_code(WINDOW, "def reconcile(ledger):", 10, 200),
        evidence=Evidence(callee=1.0),
        window_from=200,
        head_end=10,
    )


def test_a_headed_window_is_two_items_costed_by_their_own_lines() -> None:
    items = ranked([_window()], SIGNALS, [], span=lambda path, start, end: end - start + 1)
    assert [(i.start, i.end, i.span) for i in items] == [(10, 10, 1), (200, 239, 40)]
    assert sum(i.cost for i in items) == _window().shown_tokens
    # its definition line is in the head: a hit at any budget the head fits
    target = Definition("books/ledger.py", "reconcile", 10, 239)
    assert score(items, [target])["lines R@2000"] == 1.0
    # a function nested in the lines not shown is not one any more
    nested = Definition("books/ledger.py", "inner", 120, 130)
    assert score(items, [nested])["R@8000"] == 0.0
