"""The names on a diff's changed lines, and which candidates use them (``edited_names``)."""

from dataclasses import replace

import pytest

from app.diff.parse import parse_diff
from app.retrieval.context_chunk import ContextChunk
from app.retrieval.edited_names import EditedNames, names, shares, with_edited_names
from app.retrieval.evidence import Evidence

# flask's get_flashed_messages, moved from session.pop to session.get (a real change's
# shape), with a README line and a lock file beside it in the same diff.
DIFF = """\
diff --git a/src/flask/helpers.py b/src/flask/helpers.py
--- a/src/flask/helpers.py
+++ b/src/flask/helpers.py
@@ -10,3 +10,3 @@ def get_flashed_messages(with_categories=False):
     flashes = request_ctx.flashes
-    flashes = session.pop("_flashes") if "_flashes" in session else []
+    flashes = session.get("_flashes", [])
     return flashes
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-Flask is a lightweight framework
+Flask is a lightweight WSGI framework
diff --git a/uv.lock b/uv.lock
--- a/uv.lock
+++ b/uv.lock
@@ -1 +1 @@
-version = "werkzeug-3.0"
+version = "werkzeug-3.1"
"""


def chunk(code: str, **evidence: float) -> ContextChunk:
    return ContextChunk(
        0, "src/flask/app.py", 1, 10, "f", "f", "function", "python", None, code,
        evidence=Evidence(**evidence),
    )  # fmt: skip


def test_names_leave_out_keywords_and_short_words() -> None:
    assert names("return self.session.pop(key) if key in session else None") == {
        "session",
        "pop",
        "key",
    }


def test_the_names_come_from_the_changed_lines_of_the_searched_files_only() -> None:
    edited = EditedNames.of(parse_diff(DIFF), {"src/flask/helpers.py"})
    assert edited.removed == {"flashes", "session", "pop", "_flashes"}
    assert edited.added == {"flashes", "session", "get", "_flashes"}
    assert edited.replaced == {"pop"}  # the call the change moved away from
    assert "werkzeug" not in edited.edited and "lightweight" not in edited.edited
    assert "request_ctx" not in edited.edited  # a context line, not a changed one


def test_the_forgotten_function_outranks_a_lookalike_of_the_same_file() -> None:
    edited = EditedNames.of(parse_diff(DIFF), {"src/flask/helpers.py"})
    forgotten = 'def flash(m):\n    flashes = session.pop("_flashes", [])\n    flashes.append(m)'
    lookalike = "def open_session(app):\n    session = app.session_interface.open(app)"
    unrelated = "def url_for(endpoint):\n    return build(endpoint)"
    found = shares([forgotten, lookalike, unrelated], edited)
    assert found[0][0] > found[1][0] > found[2][0] == 0.0
    assert found[0][1] == 1.0  # it still calls pop, the one replaced name
    assert found[1][1] == found[2][1] == 0.0


def test_a_name_every_candidate_holds_weighs_less_than_a_rare_one() -> None:
    edited = EditedNames(frozenset({"session", "flashes"}), frozenset())
    codes = ["session flashes", "session", "session", "session"]
    found = shares(codes, edited)
    # flashes is in one code of four, session in all: flashes weighs more
    assert found[0][0] == 1.0
    assert found[1][0] == pytest.approx(found[2][0])
    assert 0 < found[1][0] < 0.5


def test_a_diff_without_code_names_gives_every_candidate_nothing() -> None:
    edited = EditedNames.of(parse_diff(DIFF), set())
    assert shares(["session.pop()", "x"], edited) == [(0.0, 0.0), (0.0, 0.0)]
    # a change that only adds names replaces none
    only_added = EditedNames(frozenset({"session"}), frozenset())
    assert shares(["session"], only_added) == [(1.0, 0.0)]


def test_the_shares_go_into_each_chunks_evidence_and_its_reasons() -> None:
    edited = EditedNames.of(parse_diff(DIFF), {"src/flask/helpers.py"})
    got = with_edited_names(
        [
            chunk('f = session.pop("_flashes") or session.get(flashes)', cochange=0.4),
            chunk("url()"),
        ],
        edited,
    )
    assert got[0].evidence.edited == 1.0 and got[0].evidence.replaced == 1.0
    assert got[0].evidence.cochange == 0.4  # the signals' evidence is kept
    assert "uses names the change replaced" in got[0].evidence.reasons()
    assert "uses the changed lines' names" in got[0].evidence.reasons()
    assert got[1].evidence.edited == 0.0 and got[1].evidence.reasons() == []
    merged = got[0].evidence.merged(got[1].evidence)
    assert merged.edited == 1.0 and merged.replaced == 1.0


def test_a_window_is_judged_by_its_whole_definition() -> None:
    edited = EditedNames(frozenset({"pop"}), frozenset({"pop"}))
    window = chunk("    total = ledger.sum()")  # the found window does not call pop...
    whole = replace(
        window, chunk_type="window", definition_code="    session.pop()\n" + window.code
    )
    got = with_edited_names([window, whole], edited)
    assert got[0].evidence.edited == 0.0
    assert got[1].evidence.edited == 1.0  # ...another window of its definition does
    assert got[1].code == window.code  # what the reviewer is shown is unchanged
