"""The new side rebuilt from the old side and real `git diff` output."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.diff.apply import apply_hunks
from app.diff.parse import DiffError, parse_diff
from tests.gitrepo import GitRepo

OLD = "".join(f"line {i}\n" for i in range(1, 41))

EDITS = {
    "middle": OLD.replace("line 20\n", "line twenty\nline 20b\n"),
    "top": "first\n" + OLD,
    "end": OLD + "last\n",
    "several hunks": OLD.replace("line 3\n", "").replace("line 30\n", "line 30!\n"),
    "no newline at end": OLD.rstrip("\n"),
    "emptied": "",
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_applying_git_diff_gives_the_new_side(tmp_path: Path, name: str) -> None:
    repo = GitRepo(tmp_path / "r")
    base = repo.write("f.py", OLD).commit("old")
    repo.write("f.py", EDITS[name]).commit("new")
    [diff] = parse_diff(repo.diff(base, "HEAD"))
    # unidiff reads an emptied file as a deleted one (None); both mean "no lines".
    rebuilt = apply_hunks(OLD.encode(), diff) or b""
    assert rebuilt.decode().splitlines() == EDITS[name].splitlines()


def test_added_deleted_and_renamed_files(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    base = repo.write("gone.py", "x = 1\n").write("old_name.py", OLD).commit("old")
    repo.git("rm", "-q", "gone.py")
    repo.git("mv", "old_name.py", "new_name.py")
    repo.write("new_name.py", OLD.replace("line 5\n", "line five\n")).write("born.py", "y = 2\n")
    repo.commit("new")
    diffs = {d.path: d for d in parse_diff(repo.git("diff", "-M", base, "HEAD"))}
    assert apply_hunks(None, diffs["born.py"]) == b"y = 2\n"
    assert apply_hunks(b"x = 1\n", diffs["gone.py"]) is None
    renamed = apply_hunks(OLD.encode(), diffs["new_name.py"])
    assert renamed == OLD.replace("line 5\n", "line five\n").encode()


def test_crlf_old_side_still_matches(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    base = repo.write("w.py", OLD).commit("old")
    repo.write("w.py", OLD.replace("line 7\n", "line seven\n")).commit("new")
    [diff] = parse_diff(repo.diff(base, "HEAD"))
    rebuilt = apply_hunks(OLD.replace("\n", "\r\n").encode(), diff)
    assert rebuilt is not None and b"line seven" in rebuilt


def test_a_diff_for_another_version_names_the_file_and_hunk(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    base = repo.write("f.py", OLD).commit("old")
    repo.write("f.py", OLD.replace("line 20\n", "line twenty\n")).commit("new")
    [diff] = parse_diff(repo.diff(base, "HEAD"))
    drifted = OLD.replace("line 19\n", "line nineteen\n").encode()
    with pytest.raises(DiffError, match=r"f\.py: hunk @@ -17,7 \+17,7 @@ does not apply"):
        apply_hunks(drifted, diff)
    with pytest.raises(DiffError, match="starts outside the file"):
        apply_hunks(b"short\n", diff)
