"""Parsing real `git diff` output, and mapping it to changed functions."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.diff.changed import _lines_in, changed_functions
from app.diff.parse import DiffError, parse_diff
from app.indexing.chunks import Chunk
from tests.gitrepo import GitRepo

SAMPLES = Path(__file__).parent / "chunker_samples"


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


def test_renames_deletions_binary_mode_and_no_newline(git_repo: GitRepo) -> None:
    git_repo.write("keep.py", "a = 1\nb = 2\n").write(
        "old_name.py", (SAMPLES / "sample.py").read_text()
    )
    git_repo.write("gone.py", "x = 1\n").write("logo.png", b"\x89PNG\0\0\x01").write(
        "run.sh", "echo hi\n"
    )
    base = git_repo.commit("base")
    git_repo.write("keep.py", "a = 1\nb = 3")  # no newline at end now
    (git_repo.root / "old_name.py").rename(git_repo.root / "new_name.py")
    (git_repo.root / "gone.py").unlink()
    git_repo.write("logo.png", b"\x89PNG\0\0\x02")
    (git_repo.root / "run.sh").chmod(0o755)
    git_repo.commit("change")

    files = {f.path: f for f in parse_diff(git_repo.diff(base, "HEAD"))}

    assert files["keep.py"].status == "modified"
    assert files["keep.py"].added_lines == {2} and files["keep.py"].removed_lines == {2}
    assert (
        files["new_name.py"].status == "renamed" and files["new_name.py"].old_path == "old_name.py"
    )
    assert files["gone.py"].status == "deleted" and files["gone.py"].removed_lines == {1}
    assert files["logo.png"].binary and not files["logo.png"].hunks
    assert files["run.sh"].mode_only


def test_crlf_and_non_utf8_content(git_repo: GitRepo) -> None:
    git_repo.write("win.py", b"def f():\r\n    return 1\r\n").write(
        "latin.py", "x = 'caf\xe9'\n".encode("latin-1")
    )
    base = git_repo.commit("base")
    git_repo.write("win.py", b"def f():\r\n    return 2\r\n").write(
        "latin.py", "x = 'th\xe9'\n".encode("latin-1")
    )
    git_repo.commit("change")
    files = {f.path: f for f in parse_diff(git_repo.diff(base, "HEAD"))}
    assert files["win.py"].added_lines == {2}
    assert files["win.py"].hunks[0].lines[-1].text == "    return 2"
    assert files["latin.py"].added_lines == {1}
    assert "\ufffd" in files["latin.py"].hunks[0].lines[-1].text


@pytest.mark.parametrize(
    "garbage",
    [
        "diff --git a/x b/x\n@@ -1,2 +1,2 @@\n-a\n",
        "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n",
    ],
)
def test_broken_diffs_are_a_clear_error(garbage: str) -> None:
    with pytest.raises(DiffError, match="not a valid unified diff"):
        parse_diff(garbage)


def test_empty_diff_is_no_change() -> None:
    assert parse_diff(b"") == []


def test_changed_functions_new_old_added_and_deleted(git_repo: GitRepo) -> None:
    git_repo.write(
        "svc.py",
        "def keep():\n    return 1\n\n\ndef edit(x):\n    return x + 1\n\n\n"
        "def drop():\n    return 0\n",
    )
    base = git_repo.commit("base")
    git_repo.write(
        "svc.py",
        "def keep():\n    return 1\n\n\ndef edit(x):\n    return x + 2\n\n\n"
        "def fresh(y):\n    return y\n",
    )
    git_repo.commit("change")
    diffs = parse_diff(git_repo.diff(base, "HEAD"))

    def read(path: str, side: str) -> bytes | None:
        rev = base if side == "old" else "HEAD"
        return git_repo.git("show", f"{rev}:{path}")

    found = {(c.qualified_name, c.status): c for c in changed_functions(diffs, read)}
    assert set(found) == {("edit", "modified"), ("fresh", "added"), ("drop", "deleted")}
    edit = found[("edit", "modified")]
    assert edit.added_lines == (6,) and edit.removed_lines == (6,)
    assert found[("drop", "deleted")].chunk.raw_code.startswith("def drop():")
    assert found[("fresh", "added")].as_json() == {
        "file_path": "svc.py",
        "symbol_name": "fresh",
        "start_line": 9,
        "end_line": 10,
    }


def test_binary_and_mode_changes_have_no_functions(git_repo: GitRepo) -> None:
    git_repo.write("a.bin", b"\0\1").write("t.sh", "echo\n")
    base = git_repo.commit("base")
    git_repo.write("a.bin", b"\0\2")
    (git_repo.root / "t.sh").chmod(0o755)
    git_repo.commit("change")
    diffs = parse_diff(git_repo.diff(base, "HEAD"))
    assert changed_functions(diffs, lambda p, s: b"") == []


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 400), st.integers(0, 60)), min_size=1, max_size=3),
    st.frozensets(st.integers(1, 500), max_size=120),
)
def test_the_lines_of_a_chunk_are_those_it_contains(
    spans: list[tuple[int, int]], lines: frozenset[int]
) -> None:
    segments = tuple(sorted((start, start + length) for start, length in spans))
    chunk = Chunk.build(
        file_path="m.py",
        language="python",
        chunk_type="function",
        symbol_name="f",
        qualified_name="f",
        segments=segments,
        raw_code="",
    )
    assert _lines_in(chunk, lines) == tuple(sorted(n for n in lines if chunk.contains_line(n)))
