"""Links in the database: written at index time, followed through re-exports, kept in step
with incremental re-indexing, and ranked before the fill signals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import Engine, event, text
from sqlalchemy.exc import OperationalError

from app.config import Settings
from app.db import vector_index
from app.db.engine import DatabaseTarget, make_engine, parse_database_url
from app.db.vector_policy import VectorIndexPolicy
from app.diff.apply import apply_hunks
from app.diff.changed import changed_functions
from app.diff.parse import FileDiff, parse_diff
from app.indexing.embedder import EmbeddingUsage, HashEmbedder
from app.indexing.links import IMPORTED, LOCAL
from app.llm.tokens import token_counter
from app.retrieval.candidates import SECONDARY_CHANGE_WEIGHT, SearchInput, function_evidence
from app.retrieval.context_chunk import ContextChunk
from app.retrieval.links import SAME_FILE_WEIGHT, TYPE_ONLY_WEIGHT, UNIQUE_NAME
from app.retrieval.natural_queries import heuristic_queries
from app.retrieval.retrieve import ContextResult, build_queries, retrieve_context, vector_texts
from app.retrieval.vector_search import indexed_repository
from app.review.context_blocks import render_context_block
from tests.fakes.loopback import free_port
from tests.support.indexing import index_tree

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
    index_tree(engine, root)


def _reader(root: Path, diffs: list[FileDiff]) -> Callable[[str, str], bytes]:
    """Both sides of the files of ``diffs``: the old one on disk, the new one patched."""
    old = {d.path: (root / d.path).read_bytes() for d in diffs}

    def read(path: str, side: str) -> bytes:
        diff = next(d for d in diffs if d.path == path)
        data = apply_hunks(old[path], diff) if side == "new" else old[path]
        assert data is not None
        return data

    return read


def _context(engine: Engine, root: Path, settings: Settings, diff: str = DIFF) -> ContextResult:
    diffs = parse_diff(diff.encode())
    changed = changed_functions(diffs, _reader(root, diffs))
    return retrieve_context(
        engine,
        "shop",
        diffs,
        changed,
        HashEmbedder(),
        settings,
        render=render_context_block,
        budget=4000,
    )


def _linked_chunks(result: ContextResult) -> list[ContextChunk]:
    """The context a link found, in the order it is shown."""
    return [c for c in result.context if c.link_score > 0]


def _linked_context(
    engine: Engine, root: Path, settings: Settings, files: dict[str, str], diff: str
) -> list[ContextChunk]:
    """``files`` written and indexed, then the context a link found for ``diff``."""
    _write(root, files)
    _index(engine, root)
    return _linked_chunks(_context(engine, root, settings, diff))


def _linked(result: ContextResult) -> list[tuple[str, str | None]]:
    return [(c.file_path, c.symbol_name) for c in _linked_chunks(result)]


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
    # every candidate is told how many of the changed lines' names it uses
    evidence = {c.symbol_name: c.evidence for c in result.context}
    assert evidence["to_cents"].edited > 0  # on the changed line
    assert evidence["monthly_report"].edited == 0.0  # calls cart_total, not those names
    assert evidence["to_cents"].replaced == 0.0  # the change removed no name


def test_a_long_lookalike_is_shown_as_an_excerpt_and_a_callee_whole(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    """The refund total sums prices the way the changed line did and nothing links it to
    the change: the reviewer sees its head and the lines using the change's names."""
    body = "".join(f"    note_{n} = len(items) + {n}\n" for n in range(12))
    refund = (
        "from pkg import to_cents\n\n\ndef refund_total(items):\n"
        f'    """What a refund pays back."""\n{body}'
        "    return sum(to_cents(i.price) for i in items)\n"
    )
    _write(tmp_path, {**FILES, "pkg/refund.py": refund})
    _index(engine, tmp_path)
    result = _context(engine, tmp_path, settings)
    by_name = {c.symbol_name: c for c in result.context}
    lookalike, callee = by_name["refund_total"], by_name["to_cents"]
    assert lookalike.link_score == 0 and lookalike.excerpt
    assert "to_cents(i.price)" in lookalike.excerpt and "note_5" not in lookalike.excerpt
    assert "lines not shown" in lookalike.excerpt
    assert lookalike.code.count("note_") == 12  # ranked by its whole code
    assert callee.link_score > 0 and not callee.excerpt
    count = token_counter().count
    whole = count(render_context_block(replace(lookalike, excerpt=""))) + 1
    assert lookalike.tokens == count(render_context_block(lookalike)) + 1 < whole


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


LONG_BODY = "".join(f"    total += {i}\n" for i in range(150))
FILES_LONG = {
    "pkg/money.py": (
        "def to_cents(amount):\n    return round(amount * 100)\n\n\n"
        f"def crunch(amount):\n    total = 0\n{LONG_BODY}    return total\n"
    ),
    "pkg/basket.py": "class Basket:\n    items: list\n",
    "pkg/cart.py": (
        "from pkg.money import to_cents, crunch\nfrom pkg.basket import Basket\n\n"
        "def _clamp(value):\n"
        "    return max(value, 0)\n\n\ndef cart_total(items: Basket):\n"
        "    return _clamp(sum(to_cents(i.price) for i in items))\n"
    ),
}
DIFF_LONG = "".join(
    line + "\n"
    for line in [
        "diff --git a/pkg/cart.py b/pkg/cart.py",
        "--- a/pkg/cart.py",
        "+++ b/pkg/cart.py",
        "@@ -8,2 +8,2 @@ def _clamp(value):",
        " def cart_total(items: Basket):",
        "-    return _clamp(sum(to_cents(i.price) for i in items))",
        "+    return _clamp(sum(to_cents(i.price) + crunch(i.tax) for i in items))",
    ]
)


def test_definitions_elsewhere_first_and_a_long_one_by_its_first_window(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    linked = _linked_context(engine, tmp_path, settings, FILES_LONG, DIFF_LONG)
    names = [c.symbol_name for c in linked]
    scores = {c.symbol_name: c.link_score for c in linked}
    # a helper the diff's own file holds weighs less than what other files define
    assert SAME_FILE_WEIGHT < 1
    assert scores["_clamp"] == pytest.approx(LOCAL * SAME_FILE_WEIGHT)
    assert scores["to_cents"] == scores["crunch"] == pytest.approx(IMPORTED)
    assert names.index("to_cents") < names.index("_clamp")
    # a class only named in an annotation ranks after what the function calls
    assert TYPE_ONLY_WEIGHT < 1
    assert scores["Basket"] == pytest.approx(IMPORTED * TYPE_ONLY_WEIGHT)
    # crunch is cut into windows: the one that starts at its signature comes, once
    crunch = [c for c in linked if c.symbol_name == "crunch"]
    assert [(c.chunk_type, c.start_line) for c in crunch] == [("window", 5)]


FILES_BARE = {
    "shop/coupon.py": (
        "class Coupon:\n    def apply_discount(self, total):\n        return total - 1\n"
    ),
    "shop/cache.py": "class Cache:\n    def refresh(self):\n        return None\n",
    "shop/session.py": "class Session:\n    def refresh(self):\n        return None\n",
    "shop/cart.py": "def cart_total(items, deal):\n    return sum(items)\n",
}

DIFF_BARE = "".join(
    line + "\n"
    for line in [
        "diff --git a/shop/cart.py b/shop/cart.py",
        "--- a/shop/cart.py",
        "+++ b/shop/cart.py",
        "@@ -1,2 +1,3 @@",
        " def cart_total(items, deal):",
        "-    return sum(items)",
        "+    deal.refresh()",
        "+    return deal.apply_discount(sum(items))",
    ]
)


def test_a_bare_name_borne_once_outranks_one_that_two_definitions_share(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    """``deal`` has no declared type: both calls link by their bare names."""
    linked = _linked_context(engine, tmp_path, settings, FILES_BARE, DIFF_BARE)
    scores = {(c.file_path, c.symbol_name): c.link_score for c in linked}
    assert scores[("shop/coupon.py", "apply_discount")] == pytest.approx(UNIQUE_NAME)
    shared = UNIQUE_NAME / 2**0.5
    assert scores[("shop/cache.py", "refresh")] == pytest.approx(shared)
    assert scores[("shop/session.py", "refresh")] == pytest.approx(shared)
    assert linked[0].symbol_name == "apply_discount"


def test_what_a_changed_test_links_to_ranks_after_what_changed_code_links_to(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    files = {
        **FILES,
        "pkg/tax.py": "def vat(amount):\n    return amount * 0.2\n",
        "tests/test_report.py": (
            "from pkg.tax import vat\n\n\ndef test_vat():\n    assert vat(10) == 2\n"
        ),
    }
    _write(tmp_path, files)
    _index(engine, tmp_path)
    test_diff = "".join(
        line + "\n"
        for line in [
            "diff --git a/tests/test_report.py b/tests/test_report.py",
            "--- a/tests/test_report.py",
            "+++ b/tests/test_report.py",
            "@@ -4,2 +4,2 @@ from pkg.tax import vat",
            " def test_vat():",
            "-    assert vat(10) == 2",
            "+    assert vat(10) == 2.0",
        ]
    )
    result = _context(engine, tmp_path, settings, DIFF + test_diff)
    scores = {c.symbol_name: c.link_score for c in _linked_chunks(result)}
    assert scores["vat"] == pytest.approx(scores["to_cents"] * SECONDARY_CHANGE_WEIGHT, rel=0.2)
    order = [c.symbol_name for c in result.context]
    assert order.index("to_cents") < order.index("vat")


def _many_callers(count: int) -> dict[str, str]:
    files = {"pkg/__init__.py": "", "pkg/helpers.py": ""}
    for i in range(count):
        files["pkg/helpers.py"] += f"def helper_{i}(x):\n    return x + {i}\n\n\n"
        files[f"pkg/use_{i}.py"] = (
            f"from pkg.helpers import helper_{i}\n\n\ndef use_{i}(x):\n    return helper_{i}(x)\n"
        )
    return files


def _change_callers(count: int) -> str:
    return "".join(
        line + "\n"
        for i in range(count)
        for line in [
            f"diff --git a/pkg/use_{i}.py b/pkg/use_{i}.py",
            f"--- a/pkg/use_{i}.py",
            f"+++ b/pkg/use_{i}.py",
            "@@ -4,2 +4,2 @@",
            f" def use_{i}(x):",
            f"-    return helper_{i}(x)",
            f"+    return helper_{i}(x) * 2",
        ]
    )


def test_retrieval_runs_the_same_statements_for_two_functions_as_for_twelve(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    """Every signal is batched over the PR's functions: the number of statements does not
    grow with them, and each function still finds its own callee."""
    _write(tmp_path, _many_callers(12))
    _index(engine, tmp_path)
    statements: list[str] = []

    def count(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        few = _context(engine, tmp_path, settings, _change_callers(2))
        few_statements = len(statements)
        statements.clear()
        many = _context(engine, tmp_path, settings, _change_callers(12))
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert len(few.changed) == 2 and len(many.changed) == 12
    assert len(statements) == few_statements
    found = {c.symbol_name for c in many.context if "structural" in c.signals}
    assert found == {f"helper_{i}" for i in range(12)}
    assert many.timings["total_s"] >= many.timings["database_s"] > 0


class _CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts, usage):  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        return super().embed(texts, usage)


def test_one_vector_query_per_function_holds_both_of_its_views(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    _write(tmp_path, _many_callers(3))
    _index(engine, tmp_path)
    diffs = parse_diff(_change_callers(3).encode())
    changed = changed_functions(diffs, _reader(tmp_path, diffs))
    embedder = _CountingEmbedder()
    result = retrieve_context(
        engine, "shop", diffs, changed, embedder, settings, render=render_context_block, budget=4000
    )
    assert len(result.changed) == 3
    assert len(embedder.texts) == 3  # not one per view
    for function, text_ in zip(result.changed, embedder.texts, strict=True):
        diff = next(d for d in diffs if d.path == function.file_path)
        hyde, change = heuristic_queries(function, diff)
        assert text_ == f"{hyde.text}\n{change.text}"


def test_vector_and_full_text_on_their_own_connections_find_what_they_find_inline(
    engine: Engine, tmp_path: Path
) -> None:
    """The vector and lexical statements run on connections of their own while the others
    run: the evidence is what a single connection gives, and a failure of either is the
    review's failure."""
    _write(tmp_path, _many_callers(6))
    _index(engine, tmp_path)
    diffs = parse_diff(_change_callers(6).encode())
    changed = changed_functions(diffs, _reader(tmp_path, diffs))
    queries = build_queries(changed, diffs)
    embedder = HashEmbedder()
    vectors = embedder.embed(vector_texts(changed, queries), EmbeddingUsage())
    search = SearchInput(changed, queries, vectors, embedder.model)
    signals = {"lexical", "structural", "vector"}
    with engine.begin() as conn:
        repo_id = indexed_repository(conn, "shop", embedder.model)
        apart = function_evidence(conn, repo_id, search, [], signals, 20, engine)
        inline = function_evidence(conn, repo_id, search, [], signals, 20)
    assert apart == inline
    assert any(e.lexical for found in apart for e in found.values())
    assert any(e.vector for found in apart for e in found.values())
    nowhere = make_engine(
        DatabaseTarget(parse_database_url(f"postgresql://x@127.0.0.1:{free_port()}/x"), False)
    )
    for alone in ({"lexical"}, {"vector"}):
        with engine.begin() as conn, pytest.raises(OperationalError):
            function_evidence(conn, repo_id, search, [], alone, 20, nowhere)


def test_the_first_index_run_refreshes_the_planners_statistics(
    engine: Engine, tmp_path: Path
) -> None:
    """Plans made from an empty table's statistics ranked full text three times slower."""

    def analyzed() -> tuple[object, float]:
        with engine.connect() as conn:
            return tuple(
                conn.execute(
                    text(
                        "SELECT s.last_analyze, c.reltuples FROM pg_stat_user_tables s"
                        " JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'code_chunks'"
                    )
                ).one()
            )  # type: ignore[return-value]

    assert analyzed()[0] is None
    _write(tmp_path, _many_callers(4))
    _index(engine, tmp_path)
    first, rows = analyzed()
    assert first is not None and rows > 0
    _index(engine, tmp_path)  # nothing changed: the statistics still hold
    assert analyzed()[0] == first


def test_an_index_run_that_builds_a_vector_index_calibrates_its_probes(
    engine: Engine, tmp_path: Path
) -> None:
    # an index from 10 rows; over a dozen rows no index is faster than a scan
    policy = VectorIndexPolicy(exact_max_rows=10, min_speedup=0.0)
    _write(tmp_path, _many_callers(12))
    index_tree(engine, tmp_path, vector_policy=policy)
    with engine.connect() as conn:
        repo = conn.execute(text("SELECT id FROM repositories WHERE full_name = 'shop'")).scalar()
        assert vector_index.index_settings(conn, int(repo)) == (1, 1)  # one list, one probe


FILES_OVERLOADS = {
    "Shop/Guards.cs": (
        "namespace Shop.Internal;\n\n"
        "internal static class Guards {\n"
        "    internal static void Guard(this object value, string message) {\n"
        "        if (value == null) throw new System.ArgumentNullException(message);\n"
        "    }\n\n"
        "    internal static void Guard(this string text, string message) {\n"
        "        if (string.IsNullOrEmpty(text)) throw new System.ArgumentException(message);\n"
        "    }\n"
        "}\n"
    ),
    "Shop/Cart.cs": (
        "namespace Shop;\n\n"
        "public class Cart {\n"
        "    public int Total(string coupon) {\n"
        "        return 0;\n"
        "    }\n"
        "}\n"
    ),
}

DIFF_OVERLOADS = "".join(
    line + "\n"
    for line in [
        "diff --git a/Shop/Cart.cs b/Shop/Cart.cs",
        "--- a/Shop/Cart.cs",
        "+++ b/Shop/Cart.cs",
        "@@ -4,3 +4,4 @@ public class Cart {",
        "     public int Total(string coupon) {",
        '+        coupon.Guard("a coupon is needed");',
        "         return 0;",
        "     }",
    ]
)


def test_every_overload_a_call_may_reach_is_linked_and_they_share_its_score(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    """``Guard`` is an extension method with two overloads (one qualified name, two
    bodies): the call is to one of them, so both are offered and share the bare name's
    score as two namesakes do. Only the first of them was offered before."""
    linked = _linked_context(engine, tmp_path, settings, FILES_OVERLOADS, DIFF_OVERLOADS)
    guards = [(c.start_line, c.link_score) for c in linked if c.file_path == "Shop/Guards.cs"]
    shared = pytest.approx(UNIQUE_NAME / 2**0.5)
    assert sorted(guards) == [(4, shared), (8, shared)]
