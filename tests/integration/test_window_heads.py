"""A window found past its definition's first lines is offered under the definition's
signature, its lines counted from the definition's first line; ranking then keeps the
best window of a definition."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, text

from app.retrieval.candidates import load_candidates
from app.retrieval.evidence import Evidence
from app.retrieval.ranking import rank_context
from app.retrieval.weights import RankingWeights
from tests.support.indexing import index_tree

BODY = "\n".join(f"    step_{n} = settle(ledger, {n})" for n in range(90))
LEDGER = f'''

def reconcile_ledger(ledger, statement):
    """Match every statement line to a ledger entry."""
{BODY}
    return refund_overdraft(ledger)


def short_one():
    return 1
'''


def test_a_later_window_is_headed_by_its_signature_and_one_window_is_kept(
    engine: Engine, tmp_path: Path
) -> None:
    (tmp_path / "ledger.py").write_text(LEDGER)
    index_tree(engine, tmp_path, "acme/ledger")
    with engine.connect() as conn:
        windows = conn.execute(
            text(
                "SELECT id, start_line, end_line, raw_code FROM code_chunks"
                " WHERE chunk_type = 'window' AND symbol_name = 'reconcile_ledger'"
                " ORDER BY start_line"
            )
        ).all()
        assert len(windows) >= 3
        first, last = windows[0], windows[-1]
        assert first.start_line == 3 and "refund_overdraft" in last.raw_code
        found = {last.id: Evidence(words=1.0), first.id: Evidence(words=0.5)}
        chunks = {
            c.chunk_id: c for c in load_candidates(conn, found, lambda p: False, RankingWeights())
        }
    headed = chunks[last.id]
    assert (headed.start_line, headed.end_line) == (3, last.end_line)
    assert headed.window_from == last.start_line and chunks[first.id].window_from == 0
    # reported as the lines it shows: the signature's line, then the window's own
    spans = [(p.start_line, p.end_line) for p in headed.shown_parts()]
    assert spans == [(3, 3), (last.start_line, last.end_line)]
    assert headed.code.splitlines()[0] == "def reconcile_ledger(ledger, statement):"
    assert f"lines 3-{last.start_line - 1} not shown" in headed.code.splitlines()[1]
    assert headed.code.endswith(last.raw_code)
    assert chunks[first.id].code == first.raw_code  # the first window is itself
    assert chunks[first.id].start_line == first.start_line
    # each window carries its whole definition, for the names it uses: the first window
    # holds the call in the last one (``edited_names``)
    for window in (first, last):
        assert "refund_overdraft" in chunks[window.id].definition_code
        assert "reconcile_ledger" in chunks[window.id].definition_code
    assert "refund_overdraft" not in chunks[first.id].code
    assert chunks[first.id].definition_code == chunks[last.id].definition_code
    # every window of the definition now starts at its first line: the best one is kept
    assert [c.chunk_id for c in rank_context(chunks.values(), 3)] == [last.id]


def _ledger_class(body_lines: int) -> str:
    """A Java class too long for one chunk: fields, then 60 methods of ``body_lines``."""
    methods = "\n\n".join(
        f"  public long settleEntry{n}(Ledger ledger, long amountInCents) {{\n"
        + "".join(f"    ledger.post({n}, amountInCents + {k});\n" for k in range(body_lines))
        + "    return ledger.balance();\n  }"
        for n in range(60)
    )
    return (
        "package books;\n\npublic final class Reconciler {\n"
        "  private final Ledger ledger;\n  private long overdraftInCents;\n\n"
        f"{methods}\n}}\n"
    )


def _skeleton_windows(engine: Engine) -> list[tuple[int, int, int, list[int], str]]:
    with engine.connect() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                text(
                    "SELECT id, start_line, end_line, segments, raw_code FROM code_chunks"
                    " WHERE chunk_type = 'window' AND symbol_name = 'Reconciler'"
                    " ORDER BY start_line"
                )
            )
        ]


def _pairs(flat: list[int]) -> list[tuple[int, int]]:
    return list(zip(flat[::2], flat[1::2], strict=True))


def _held(source: Path, flat: list[int]) -> list[str]:
    """The lines of ``source`` the stretches ``flat`` hold, in order."""
    lines = source.read_text().splitlines()
    return [lines[n - 1] for s, e in _pairs(flat) for n in range(s, e + 1)]


def _indexed_ledger(engine: Engine, root: Path) -> Path:
    source = root / "Reconciler.java"
    source.write_text(_ledger_class(body_lines=2))
    index_tree(engine, root, "acme/books")
    return source


def test_a_skeleton_window_is_stored_and_shown_as_the_stretches_it_holds(
    engine: Engine, tmp_path: Path
) -> None:
    source = _indexed_ledger(engine, tmp_path)
    windows = _skeleton_windows(engine)
    assert len(windows) >= 2  # the class's own lines and 60 signatures: cut into windows
    for _, start, end, flat, raw_code in windows:
        stretches = _pairs(flat)
        assert len(stretches) > 1 and stretches[0][0] == start and stretches[-1][1] == end
        # the stretches are exactly the lines of its code: signatures, never a body
        assert _held(source, flat) == raw_code.split("\n")
        assert not any("ledger.post" in line for line in _held(source, flat))
    last = windows[-1]
    with engine.connect() as conn:
        found = {last[0]: Evidence(words=1.0)}
        (headed,) = load_candidates(conn, found, lambda p: False, RankingWeights())
    parts = [(p.start_line, p.end_line) for p in headed.shown_parts()]
    flat = last[3]
    # the class's head, then each stretch of the window: no entry names a body's lines
    assert parts[0][0] == 3 and parts[1:] == _pairs(flat)
    assert sum(e - s + 1 for s, e in parts[1:]) < (last[2] - last[1] + 1) / 2


def test_a_skeleton_window_moved_by_a_longer_body_is_updated_in_place(
    engine: Engine, tmp_path: Path
) -> None:
    source = _indexed_ledger(engine, tmp_path)
    before = _skeleton_windows(engine)
    again = index_tree(engine, tmp_path, "acme/books")  # nothing changed: nothing written
    assert again.chunks_updated == 0 and again.chunks_added == 0
    assert _skeleton_windows(engine) == before
    # every body a line longer: each signature moves, the skeleton's code does not change
    source.write_text(_ledger_class(body_lines=3))
    index_tree(engine, tmp_path, "acme/books")
    after = _skeleton_windows(engine)
    assert [w[0] for w in after] == [w[0] for w in before]  # the same rows, not new ones
    assert [w[4] for w in after] == [w[4] for w in before]
    for _, _, _, flat, raw_code in after:
        assert _held(source, flat) == raw_code.split("\n")


def test_an_index_from_before_segments_gets_them_on_its_next_run_in_place(
    engine: Engine, tmp_path: Path
) -> None:
    _indexed_ledger(engine, tmp_path)
    before = _skeleton_windows(engine)
    with engine.begin() as conn:  # as an index written before migration 0024 left it
        conn.execute(text("UPDATE code_chunks SET segments = NULL"))
        conn.execute(text("UPDATE source_files SET link_version = 12"))
    assert all(w[3] is None for w in _skeleton_windows(engine))
    report = index_tree(engine, tmp_path, "acme/books")
    assert report.chunks_added == 0  # nothing summarised or embedded again
    assert _skeleton_windows(engine) == before  # the same rows, their stretches filled in
