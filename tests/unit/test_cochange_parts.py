"""Pure parts of "what else must change": git log and patch parsing, which definitions a
commit changed, coupling scores, BM25, pairs and interface satisfaction."""

from __future__ import annotations

import math

import pytest

from app.git import ChangedLines, LoggedCommit, parse_log, parse_patches
from app.indexing.history import change_set, changed_definitions, is_source
from app.retrieval.cochange import FILE_LEVEL_WEIGHT, coupling
from app.retrieval.full_text import bm25_score
from app.retrieval.go_interfaces import Interface, implementers
from app.retrieval.hierarchy import separator
from app.retrieval.pairs import counterpart_names
from app.retrieval.siblings import pair_place

SHA1, SHA2, SHA3 = "a" * 40, "b" * 40, "c" * 40


def test_git_log_records_become_commits_with_their_paths() -> None:
    out = (
        f"\x1e{SHA1}\x1f{SHA2} {SHA3}\x1f1700000000\0\napp/a.py\0docs/ü.md\0"
        f"\x1e{SHA2}\x1f\x1f1600000000\0\n"
    ).encode()
    assert parse_log(out) == [
        LoggedCommit(SHA1, SHA2, 1700000000, ("app/a.py", "docs/ü.md")),
        LoggedCommit(SHA2, None, 1600000000, ()),  # a root: no parent
    ]


PATCH = f"""{SHA1}
diff --git a/app/a.py b/app/a.py
index {"1" * 40}..{"2" * 40} 100644
--- a/app/a.py
+++ b/app/a.py
@@ -3 +3,2 @@ def f():
-    return 1
+    x = 2
+    return x
@@ -10,2 +11,0 @@ def g():
-    a = 1
-    b = 2
diff --git a/gone.py b/gone.py
deleted file mode 100644
index {"3" * 40}..{"0" * 40}
--- a/gone.py
+++ /dev/null
@@ -1 +0,0 @@
-x = 1
{SHA2}
diff --git a/new.go b/new.go
new file mode 100644
index {"0" * 40}..{"4" * 40}
--- /dev/null
+++ b/new.go
@@ -0,0 +1 @@
+package x
""".encode()


def test_patches_give_each_commit_its_files_new_side_lines() -> None:
    assert parse_patches(PATCH) == {
        SHA1: [ChangedLines("app/a.py", "2" * 40, (3, 4), (11,))],  # gone.py has no new side
        SHA2: [ChangedLines("new.go", "4" * 40, (1,), ())],
    }


SOURCE = b"""class Store:
    def get(self, key):
        return self.data[key]

    def put(self, key, value):
        self.data[key] = value
        self.dirty = True

TIMEOUT = 3
"""


def test_changed_lines_map_to_the_definitions_that_hold_them() -> None:
    def names(added: tuple[int, ...], removed_after: tuple[int, ...] = ()) -> list[str]:
        return changed_definitions("s.py", SOURCE, ChangedLines("s.py", "", added, removed_after))

    assert names((3,)) == ["Store.get"]
    assert names((6, 7)) == ["Store.put"]
    assert names((1,)) == ["Store"]  # the class header
    assert names((9,)) == []  # module-level code: the file only
    assert names((), (6,)) == ["Store.put"]  # lines removed between two of put's lines
    assert names((), (4,)) == ["Store"]  # removed between two methods: the class changed
    assert names((), (8,)) == []  # removed among module-level lines


def test_a_change_set_keeps_source_files_and_their_definitions() -> None:
    commit = LoggedCommit(SHA1, SHA2, 1, ("s.py", "README.md", "yarn.lock"))
    changed = [
        ChangedLines("s.py", "b1", (3,), ()),
        ChangedLines("README.md", "b2", (1,), ()),
        ChangedLines("yarn.lock", "b3", (1,), ()),
    ]
    found = change_set(commit, changed, {"b1": SOURCE, "b2": b"# x\n", "b3": b"x"})
    assert found.changes == (("s.py", ""), ("s.py", "Store.get"))
    assert found.symbols == 1
    assert is_source("pkg/m.go") and not is_source("node_modules/x/i.js")


def test_coupling_is_shared_changes_over_each_sides_own() -> None:
    # changed together in both of the function's changes, and in half of the other's
    score, together, exact = coupling(2.0, 2, 2.0, 2, 2.0, 2.0, 4.0)  # type: ignore[misc]
    assert (together, exact) == (2, True)
    assert score == pytest.approx(2.0 / math.sqrt(2.0 * 4.0))
    # only through the file: the function itself has no history
    score, together, exact = coupling(None, 0, 1.0, 1, None, 4.0, 1.0)  # type: ignore[misc]
    assert (together, exact) == (1, False)
    assert score == pytest.approx(FILE_LEVEL_WEIGHT * 1.0 / math.sqrt(4.0))
    assert coupling(None, 0, 1.0, 1, None, 4.0, None) is None


def test_bm25_against_a_hand_computed_example() -> None:
    # 10 chunks; "serialize" in 1 of them, "value" in 5; the document has 4 distinct
    # words, "serialize" twice; the average chunk has 8
    document = {"serialize": 2, "value": 1, "user": 1, "dump": 1}
    df = {"serialize": 1, "value": 5}
    idf_rare = math.log(1 + (10 - 1 + 0.5) / (1 + 0.5))  # ln(22/3) = 1.9924
    idf_common = math.log(1 + (10 - 5 + 0.5) / (5 + 0.5))  # ln 2
    norm = 1.2 * (1 - 0.75 + 0.75 * 4 / 8)  # 0.75
    expected = idf_rare * 2 * 2.2 / (2 + norm) + idf_common * 1 * 2.2 / (1 + norm)
    assert bm25_score(["serialize", "value"], document, df, 10, 8.0) == pytest.approx(expected)
    assert expected == pytest.approx(3.1879 + 0.8714, abs=1e-3)  # worked by hand
    # a rare shared word outweighs a common one
    assert bm25_score(["serialize"], document, df, 10, 8.0) > bm25_score(
        ["value"], {"value": 2, "user": 1, "dump": 1, "x": 1}, df, 10, 8.0
    )


@pytest.mark.parametrize(
    ("name", "language", "expected"),
    [
        ("encode_headers", "python", "decode_headers"),
        ("MarshalJSON", "go", "UnmarshalJSON"),
        ("UnmarshalText", "go", "MarshalText"),
        ("to_dict", "python", "from_dict"),
        ("__enter__", "python", "__exit__"),
        ("__aexit__", "python", "__aenter__"),
        ("__getitem__", "python", "__setitem__"),
        ("read", "python", "aread"),
        ("aiter_bytes", "python", "iter_bytes"),
        ("getHeader", "typescript", "setHeader"),
        ("Client", "python", "AsyncClient"),
        ("serializeUser", "typescript", "deserializeUser"),
    ],
)
def test_the_other_half_of_a_pair(name: str, language: str, expected: str) -> None:
    assert expected in counterpart_names(name, language)
    assert name not in counterpart_names(name, language)


def test_a_name_without_a_pair_has_only_its_asynchronous_twins() -> None:
    assert counterpart_names("__init__", "python") == []
    assert counterpart_names("compute", "go") == ["async_compute", "compute_async"]


def test_where_the_other_half_is() -> None:
    assert pair_place("a/x.py", "C.decode", "a/x.py", "C.decode") == "class"
    assert pair_place("a/x.py", "decode", "a/x.py", "decode") == "file"
    assert pair_place("a/x.py", "decode", "a/y.py", "decode") == "dir"
    assert pair_place("a/x.py", "decode", "b/y.py", "decode") == "elsewhere"
    assert pair_place("a/x.rb", "C::decode", "b/y.rb", "C::decode") == "class"


def test_qualified_names_are_split_as_their_language_joins_them() -> None:
    assert [separator(lang) for lang in ("python", "go", "java", "csharp", "kotlin")] == ["."] * 5
    assert [separator(lang) for lang in ("ruby", "php", "rust", "c", "cpp")] == ["::"] * 5
    assert separator(None) == "." and separator("cobol") == "."


def test_a_type_implements_an_interface_with_all_its_methods() -> None:
    encoder = Interface("enc.go", "Encoder", frozenset({"Clone", "EncodeEntry"}), 1)
    types = {
        ("zapcore", "zapcore.jsonEncoder"): {"Clone": 2, "EncodeEntry": 3, "AddString": 4},
        ("zapcore", "zapcore.consoleEncoder"): {"Clone": 5, "EncodeEntry": 6},
        ("zapcore", "zapcore.half"): {"EncodeEntry": 7},
    }
    assert implementers(encoder, types) == [
        ("zapcore", "zapcore.consoleEncoder"),
        ("zapcore", "zapcore.jsonEncoder"),
    ]
