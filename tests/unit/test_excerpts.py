"""Look-alike context shown as an excerpt (``app/retrieval/excerpts.py``)."""

import math
from dataclasses import replace

import pytest

from app.llm.tokens import estimate_tokens
from app.retrieval.context_chunk import ContextChunk
from app.retrieval.evidence import Evidence
from app.retrieval.excerpts import _gap, excerpt, with_excerpts
from app.retrieval.ranking import pack
from app.retrieval.relevance import DIFF_RELEVANCE, scored
from app.retrieval.retrieve import block_cost
from app.review.context_blocks import render_context_block

#: A function of 20 lines, its lines numbered in their text to tell them apart.
CODE = "\n".join(
    [
        "def settle(invoice, gateway):",
        '    """Settle an invoice."""',
        "    total = invoice.total  # 3",
    ]
    + [f"    step_{n} = prepare({n})  # {n}" for n in range(4, 10)]
    + ["    receipt = gateway.charge(invoice.card, total)  # 10"]
    + [f"    audit_{n} = record({n})  # {n}" for n in range(11, 20)]
    + ["    return receipt  # 20"]
)


def _chunk(code: str = CODE, chunk_type: str = "function", **evidence: float) -> ContextChunk:
    return ContextChunk(
        7,
        "billing/settle.py",
        40,
        59,
        "settle",
        "settle",
        chunk_type,
        "python",
        None,
        code,
        evidence=Evidence(**evidence),  # type: ignore[arg-type]
    )


def test_an_excerpt_keeps_the_head_and_the_lines_around_the_changed_names() -> None:
    shown = excerpt(CODE, {"charge", "capture"}).split("\n")
    assert shown == [
        "def settle(invoice, gateway):",
        '    """Settle an invoice."""',
        "    total = invoice.total  # 3",
        "    ... (5 lines not shown)",
        "    step_9 = prepare(9)  # 9",
        "    receipt = gateway.charge(invoice.card, total)  # 10",
        "    audit_11 = record(11)  # 11",
        "    ... (9 lines not shown)",
    ]
    # every line of the code is either shown or counted in a marker
    assert len(shown) - 2 + 5 + 9 == len(CODE.split("\n"))


def test_without_a_changed_name_only_the_head_is_shown() -> None:
    assert excerpt(CODE, {"unrelated"}).split("\n") == [
        *CODE.split("\n")[:3],
        "    ... (17 lines not shown)",
    ]


def test_short_code_and_code_mostly_kept_are_shown_whole() -> None:
    assert excerpt("\n".join(CODE.split("\n")[:11]), {"charge"}) == ""  # under 12 lines
    # names on most lines: the gaps would save too little
    assert excerpt(CODE, {"step_4", "step_6", "step_8", "audit_12", "audit_14"}) == ""


def test_only_look_alikes_get_excerpts() -> None:
    alike = _chunk(words=0.8)
    callee = _chunk(callee=0.9)  # what the change calls: its body is what it relies on
    caller = _chunk(caller=0.5, words=0.8)
    cls = _chunk(chunk_type="class", words=0.8)  # already its header and signatures
    coupled = _chunk(cochange=0.7)  # changed with it before: still a "should it change?"
    out = with_excerpts([alike, callee, caller, cls, coupled], {"charge"})
    assert [bool(c.excerpt) for c in out] == [True, False, False, False, True]
    assert [c.code for c in out] == [CODE] * 5  # what it is ranked by stays whole
    # an excerpt returns the lines it shows: through line 11 of 20 (file line 50), not 59
    assert [c.end_line for c in out] == [50, 59, 59, 59, 50]


def test_a_window_excerpt_ends_within_its_own_lines() -> None:
    """A window (its definition from line 1, its own lines from 100) whose excerpt keeps
    only its head: the lines returned end in the window, never above where it begins."""
    window = replace(_chunk(words=0.8), start_line=1, end_line=119, window_from=100)
    [cut] = with_excerpts([window], {"nothing_here"})
    assert cut.excerpt and cut.end_line == 119 - 17
    # a signature of three lines: the excerpt's head is all signature, and its end is
    # the window's first line, not line 98 above it
    signature = ["def settle(", "    invoice,", "    gateway):", "... (lines 4-99 not shown)"]
    headed = "\n".join(signature + [f"    x_{n} = {n}" for n in range(10)])
    [only_head] = with_excerpts([replace(window, code=headed, end_line=109)], {"nothing_here"})
    assert only_head.excerpt and only_head.end_line == 100


def test_the_reviewer_sees_the_excerpt_and_the_packer_counts_it() -> None:
    [alike] = with_excerpts([_chunk(words=0.8)], {"charge"})
    block = render_context_block(alike)
    assert "(function, excerpt)" in block and "gateway.charge" in block
    assert "audit_15" not in block and "... (9 lines not shown)" in block
    whole = replace(alike, excerpt="")
    budget = estimate_tokens(render_context_block(alike)) + 5
    assert estimate_tokens(render_context_block(whole)) > budget  # whole, it does not fit
    packed, used = pack([alike], budget, block_cost(render_context_block, estimate_tokens))
    assert packed and used <= budget
    assert packed[0].as_json()[0]["excerpt"] is True


def test_a_name_on_most_lines_keeps_none_of_them() -> None:
    """``invoice`` is on the changed line and on most of these lines: only the rarer
    ``charge`` says where to look."""
    code = CODE.replace("prepare(", "invoice.prepare(").replace("record(", "invoice.record(")
    shown = excerpt(code, {"invoice", "charge"}).split("\n")
    assert [line for line in shown if "lines not shown" not in line] == [
        *code.split("\n")[:3],
        *code.split("\n")[8:11],
    ]


def test_an_excerpt_is_priced_between_what_it_shows_and_its_whole_code() -> None:
    """The same look-alike, whole and as an excerpt: the excerpt costs less to show, so it
    scores higher, but it is priced by the geometric mean of its shown and whole tokens
    (the model's ``size`` input is the shown size)."""
    [alike] = with_excerpts([_chunk(words=0.8, edited=0.5)], {"charge"})
    whole = replace(alike, excerpt="", whole_tokens=0)
    assert alike.shown_tokens < whole.shown_tokens == alike.whole_tokens
    shown, full = scored([alike, whole], ["billing/pay.py"], DIFF_RELEVANCE)
    floor = DIFF_RELEVANCE.min_tokens
    price = math.sqrt(max(alike.shown_tokens, floor) * alike.whole_tokens)
    assert shown.score == pytest.approx(shown.relevance / (price / 100))
    assert full.score == pytest.approx(full.relevance / (whole.shown_tokens / 100))
    assert full.score < shown.score < full.score * whole.shown_tokens / alike.shown_tokens


def test_a_single_line_between_kept_lines_is_shown_not_marked() -> None:
    """Lines 9-11 and 13-15 are kept around two changed names: line 12 alone between
    them costs what its marker would, so it is shown."""
    lines = CODE.split("\n")
    lines[9], lines[13] = "    mark = charge()  # 10", "    mark = capture()  # 14"
    shown = excerpt("\n".join(lines), {"charge", "capture"}).split("\n")
    assert shown == [*lines[:3], "    ... (5 lines not shown)", *lines[8:15], _gap(lines[14], 5)]
    assert _gap("        x = 1", 1) == "        ... (1 line not shown)"
