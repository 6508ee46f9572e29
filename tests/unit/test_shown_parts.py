"""Every entry of ``context --json`` is the lines it shows (``ContextChunk.shown_parts``):
a window under its definition's head is two stretches, the head and the window."""

from dataclasses import replace

from app.retrieval.context_chunk import ContextChunk
from app.retrieval.evidence import Evidence
from app.retrieval.retrieve import ContextResult
from app.retrieval.window_heads import headed_code
from app.review.context_blocks import render_context_block

WINDOW = "\n".join(f"    step_{n} = settle(ledger, {n})" for n in range(100, 140))
HEADED = headed_code(WINDOW, "def reconcile(ledger, statement):", 10, 100)


def _chunk(**fields: object) -> ContextChunk:
    chunk = ContextChunk(
        3,
        "books/ledger.py",
        10,
        139,
        "reconcile",
        "reconcile",
        "window",
        "python",
        None,
        HEADED,
        evidence=Evidence(words=0.5),
        tokens=400,
        window_from=100,
        head_end=11,
    )
    return replace(chunk, **fields)


def test_a_headed_window_shows_its_head_and_its_own_lines_and_splits_its_tokens() -> None:
    head, window = _chunk().shown_parts()
    assert (head.start_line, head.end_line) == (10, 11)
    assert (window.start_line, window.end_line) == (100, 139)
    assert window.tokens == -(-len(WINDOW) // 4)  # a quarter of its characters
    assert head.tokens + window.tokens == 400  # the name, reasons and signature: the rest
    assert [p.tokens for p in _chunk().shown_parts(0)] == [0, 0]


def test_any_other_chunk_is_one_stretch_with_all_its_tokens() -> None:
    plain = _chunk(window_from=0, head_end=0, chunk_type="function", code=WINDOW)
    assert [(p.start_line, p.end_line, p.tokens) for p in plain.shown_parts()] == [(10, 139, 400)]
    # a head running into the window leaves no lines out between them: one stretch
    touching = _chunk(head_end=99)
    assert [(p.start_line, p.end_line) for p in touching.shown_parts()] == [(10, 139)]
    # a window whose head was not found (an index from before heads were read)
    assert len(_chunk(head_end=0).shown_parts()) == 1


def test_an_excerpted_window_shares_its_tokens_by_what_the_excerpt_shows() -> None:
    shown = "\n".join(HEADED.split("\n")[:5]) + "\n    ... (35 lines not shown)"
    head, window = _chunk(excerpt=shown, end_line=102).shown_parts(100)
    assert (window.start_line, window.end_line) == (100, 102)
    assert window.tokens == -(-len("\n".join(shown.split("\n")[2:])) // 4)
    assert head.tokens == 100 - window.tokens


def test_the_context_contract_has_an_entry_per_stretch_each_naming_its_item() -> None:
    function = _chunk(window_from=0, head_end=0, chunk_type="function", start_line=1, end_line=8)
    result = ContextResult([], [function, _chunk()], 700, 4000, "tiktoken")
    entries = result.as_json()["context"]
    assert isinstance(entries, list)
    spans = [(e["item"], e["start_line"], e["end_line"], e["tokens"]) for e in entries]
    assert [s[:3] for s in spans] == [(0, 1, 8), (1, 10, 11), (1, 100, 139)]
    assert spans[1][3] + spans[2][3] == 400
    assert entries[1]["why"] == entries[2]["why"] and entries[1]["symbol_name"] == "reconcile"


def test_the_prompt_names_the_stretches_a_headed_window_shows() -> None:
    block = render_context_block(_chunk())
    assert block.startswith("### books/ledger.py:10-11, 100-139 reconcile (window)")
    plain = render_context_block(_chunk(window_from=0, head_end=0))
    assert plain.startswith("### books/ledger.py:10-139 reconcile (window)")


# a window of a class skeleton: its own fields, then its members' signatures, not their
# bodies (the members are chunks of their own)
SKELETON = ((100, 104), (120, 121), (160, 161), (300, 300))


def test_a_window_of_several_stretches_reports_each_and_shares_its_tokens_by_lines() -> None:
    parts = _chunk(segments=SKELETON, end_line=300).shown_parts()
    assert [(p.start_line, p.end_line) for p in parts] == [(10, 11), *SKELETON]
    head, *own = parts
    window = -(-len(WINDOW) // 4)
    assert head.tokens == 400 - window
    # 5, 2, 2 and 1 lines of 10: the window's share by lines, the rounding on the last
    assert [p.tokens for p in own] == [
        window * 5 // 10,
        window * 2 // 10,
        window * 2 // 10,
        window - 2 * (window * 2 // 10) - window * 5 // 10,
    ]


def test_a_skeleton_window_without_a_head_apart_starts_at_the_items_first_line() -> None:
    # the first window of a class: the head is its own first stretch
    first = _chunk(window_from=0, head_end=0, start_line=100, segments=SKELETON, end_line=300)
    assert [(p.start_line, p.end_line) for p in first.shown_parts()] == list(SKELETON)
    assert sum(p.tokens for p in first.shown_parts()) == 400
    # a head that runs into the window joins the window's first stretch
    touching = _chunk(head_end=99, segments=SKELETON, end_line=300)
    assert [(p.start_line, p.end_line) for p in touching.shown_parts()] == [
        (10, 104),
        *SKELETON[1:],
    ]


def test_the_prompt_and_the_contract_name_only_the_lines_a_skeleton_window_shows() -> None:
    skeleton = _chunk(segments=SKELETON, end_line=300)
    block = render_context_block(skeleton)
    assert block.startswith("### books/ledger.py:10-11, 100-104, 120-121, 160-161, 300-300 ")
    entries = ContextResult([], [skeleton], 400, 4000, "tiktoken").as_json()["context"]
    assert isinstance(entries, list)
    assert [(e["start_line"], e["end_line"]) for e in entries] == [(10, 11), *SKELETON]
    # no entry claims a line of a member's body: 105-119, 122-159, 162-299 are not shown
    assert not any(e["start_line"] <= 200 <= e["end_line"] for e in entries)
    assert sum(e["tokens"] for e in entries) == 400
