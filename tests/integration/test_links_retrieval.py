"""Links in the database: written at index time, followed through re-exports, kept in step
with incremental re-indexing, and ranked before the fill signals."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, text

from app.config import Settings
from app.diff.changed import changed_functions
from app.diff.parse import parse_diff
from app.indexing.embedder import HashEmbedder
from app.indexing.indexer import Indexer
from app.retrieval.retrieve import ContextResult, retrieve_context

FILES = {
    "pkg/__init__.py": "from .money import to_cents\n\n__all__ = ['to_cents']\n",
    "pkg/money.py": "def to_cents(amount):\n    return round(amount * 100)\n",
    "pkg/cart.py": (
        "from pkg import to_cents\n\n\ndef cart_total(items):\n"
        "    return sum(to_cents(i.price) for i in items)\n"
    ),
    "pkg/report.py": (
        "from .cart import cart_total\n\n\ndef monthly_report(carts):\n"
        "    return [cart_total(c) for c in carts]\n"
    ),
    "tests/test_cart.py": (
        "from pkg.cart import cart_total\n\n\ndef test_cart_total():\n"
        "    assert cart_total([]) == 0\n"
    ),
}

DIFF = "".join(
    line + "\n"
    for line in [
        "diff --git a/pkg/cart.py b/pkg/cart.py",
        "--- a/pkg/cart.py",
        "+++ b/pkg/cart.py",
        "@@ -3,3 +3,4 @@ from pkg import to_cents",
        " ",
        " def cart_total(items):",
        "-    return sum(to_cents(i.price) for i in items)",
        "+    total = sum(to_cents(i.price) for i in items)",
        "+    return max(total, 0)",
    ]
)


def _write(root: Path, files: dict[str, str]) -> None:
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content)


def _index(engine: Engine, root: Path) -> None:
    Indexer(engine, "shop", root, embedder=HashEmbedder()).run()


def _context(engine: Engine, root: Path, settings: Settings) -> ContextResult:
    diffs = parse_diff(DIFF.encode())
    old = {d.path: (root / d.path).read_bytes() for d in diffs}

    def read(path: str, side: str) -> bytes:
        from app.diff.apply import apply_hunks

        diff = next(d for d in diffs if d.path == path)
        data = apply_hunks(old[path], diff) if side == "new" else old[path]
        assert data is not None
        return data

    changed = changed_functions(diffs, read)
    return retrieve_context(engine, "shop", diffs, changed, HashEmbedder(), settings, budget=4000)


def _linked(result: ContextResult) -> list[tuple[str, str | None]]:
    return [(c.file_path, c.symbol_name) for c in result.context if c.link_score > 0]


def test_definition_through_a_reexport_and_callers_first(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    _write(tmp_path, FILES)
    _index(engine, tmp_path)
    result = _context(engine, tmp_path, settings)
    linked = _linked(result)
    # `from pkg import to_cents` reaches pkg/money.py through pkg/__init__.py
    assert ("pkg/money.py", "to_cents") in linked
    assert ("pkg/report.py", "monthly_report") in linked
    # code first: the test that calls cart_total comes after every code chunk
    order = [c.file_path for c in result.context]
    assert "tests/test_cart.py" in order
    first_test = order.index("tests/test_cart.py")
    assert all(not p.startswith("tests/") for p in order[:first_test])
    assert all(c.file_path.startswith("tests/") or not c.secondary for c in result.context)


def test_links_follow_incremental_reindexing(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    _write(tmp_path, FILES)
    _index(engine, tmp_path)
    with engine.connect() as conn:
        before = conn.execute(
            text("SELECT id FROM code_chunks WHERE symbol_name = 'to_cents'")
        ).scalar_one()
    # edit the callee: its row is replaced, and the caller's link follows it
    _write(tmp_path, {"pkg/money.py": "def to_cents(amount):\n    return int(amount * 100)\n"})
    _index(engine, tmp_path)
    with engine.connect() as conn:
        after = conn.execute(
            text("SELECT id FROM code_chunks WHERE symbol_name = 'to_cents'")
        ).scalar_one()
    assert after != before
    assert ("pkg/money.py", "to_cents") in _linked(_context(engine, tmp_path, settings))

    # the caller stops calling monthly_report's callee: report.py's links are rewritten
    _write(tmp_path, {"pkg/report.py": "def monthly_report(carts):\n    return len(carts)\n"})
    _index(engine, tmp_path)
    assert ("pkg/report.py", "monthly_report") not in _linked(_context(engine, tmp_path, settings))
    with engine.connect() as conn:
        stale = conn.execute(
            text(
                "SELECT count(*) FROM chunk_links WHERE file_path = 'pkg/report.py'"
                " AND name = 'cart_total'"
            )
        ).scalar_one()
    assert stale == 0


def test_deleting_a_file_deletes_its_links(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    _write(tmp_path, FILES)
    _index(engine, tmp_path)
    (tmp_path / "pkg/report.py").unlink()
    _index(engine, tmp_path)
    with engine.connect() as conn:
        left = conn.execute(
            text("SELECT count(*) FROM chunk_links WHERE file_path = 'pkg/report.py'")
        ).scalar_one()
    assert left == 0
