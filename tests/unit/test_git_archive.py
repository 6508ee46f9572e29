"""A commit is read as committed: ``export-ignore`` and ``export-subst`` do not apply,
oversized or missing blobs are reported skipped without being archived, and the
repository read is never written to (app/git_archive.py)."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from app.ci.local import git_archive
from app.git import GitError, LocalRepo
from app.indexing.archive import ArchiveLimits, GitArchiveSource
from app.indexing.source_tree import RepoConfig
from tests.gitrepo import GitRepo

ATTRIBUTES = (
    "/**/*Test.php export-ignore\n/docs export-ignore\nsrc/Version.php export-subst\n"
    "/.gitattributes export-ignore\n"
)


def _package(root: Path) -> tuple[GitRepo, str]:
    """A Composer-style package whose release archive leaves its tests and docs out."""
    repo = GitRepo(root)
    repo.write(".gitattributes", ATTRIBUTES)
    repo.write("src/Reader.php", "<?php\nfinal class Reader { public function read() {} }\n")
    repo.write("src/ReaderTest.php", "<?php\nfinal class ReaderTest { function testRead() {} }\n")
    repo.write("src/Version.php", "<?php\nconst VERSION = '$Format:%H$';\n")
    repo.write("docs/guide.md", "# Guide\n")
    return repo, repo.commit("package")


def _names(tar: bytes) -> set[str]:
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        return set(archive.getnames())


def _files(source: GitArchiveSource, config: RepoConfig | None = None) -> dict[str, object]:
    return {f.path: f.skipped or f.read() for f in source.files(config or source.config())}


def test_files_a_release_archive_leaves_out_are_read_as_committed(tmp_path: Path) -> None:
    repo, commit = _package(tmp_path / "pkg")
    plain = _names(repo.git("archive", "--format=tar", commit))
    assert "src/ReaderTest.php" not in plain  # what git archive alone gives

    files = _files(GitArchiveSource(str(repo.root), commit, None, ArchiveLimits()))

    assert files["src/ReaderTest.php"] == (repo.root / "src/ReaderTest.php").read_bytes()
    assert files["docs/guide.md"] == b"# Guide\n"
    assert files["src/Version.php"] == b"<?php\nconst VERSION = '$Format:%H$';\n"
    assert ".gitattributes" in files
    assert not (repo.root / ".git" / "info" / "attributes").exists()  # nothing written there


def test_a_ci_checkouts_archive_holds_every_file_under_its_top_folder(tmp_path: Path) -> None:
    repo, commit = _package(tmp_path / "pkg")
    into = io.BytesIO()

    git_archive(LocalRepo(repo.root), commit, into, max_bytes=1 << 20)

    assert {"tree/src/ReaderTest.php", "tree/docs/guide.md"} <= _names(into.getvalue())


def test_oversized_and_missing_blobs_are_skipped_without_being_archived(tmp_path: Path) -> None:
    repo, _ = _package(tmp_path / "pkg")
    repo.write("data/big.php", "<?php\n" + "// filler\n" * 200)
    repo.write("data/lost.php", "<?php\nfunction lost() {}\n")
    commit = repo.commit("big and lost")
    lost = repo.git("rev-parse", f"{commit}:data/lost.php").decode().strip()
    clone = tmp_path / "clone"  # a copy without one blob, as a partial clone or a mirror
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--no-local", str(repo.root), str(clone)], check=True
    )
    pack = next((clone / "objects" / "pack").glob("*.pack"))
    listed = subprocess.run(
        ["git", "-C", str(clone), "rev-list", "--objects", "--all"], capture_output=True, text=True
    ).stdout.split("\n")
    objects = "\n".join(line.split(" ")[0] for line in listed if line and not line.startswith(lost))
    subprocess.run(
        ["git", "-C", str(clone), "pack-objects", "-q", str(clone / "objects/pack/kept")],
        input=objects,
        text=True,
        check=True,
    )
    for old in (clone / "objects" / "pack").glob(pack.stem + ".*"):
        old.unlink()
    missing = subprocess.run(["git", "-C", str(clone), "cat-file", "-e", lost], capture_output=True)
    assert missing.returncode != 0

    config = RepoConfig(max_file_bytes=1000)
    files = _files(GitArchiveSource(str(clone), commit, None, ArchiveLimits()), config)

    assert files["data/big.php"] == "too large (2006 bytes > 1000)"
    assert files["data/lost.php"] == "object missing"
    assert files["src/Reader.php"] == (repo.root / "src/Reader.php").read_bytes()


def test_a_revision_the_repository_lacks_is_a_git_error(tmp_path: Path) -> None:
    repo, _ = _package(tmp_path / "pkg")
    source = GitArchiveSource(str(repo.root), "no-such-branch", None, ArchiveLimits())

    with pytest.raises(GitError, match="no-such-branch"):
        list(source.files(source.config()))


def test_a_worktree_reads_its_repositorys_objects(tmp_path: Path) -> None:
    repo, commit = _package(tmp_path / "pkg")
    worktree = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "--detach", str(worktree), commit)
    shutil.rmtree(repo.root / "src")  # the work trees' files are never what is read

    files = _files(GitArchiveSource(str(worktree), commit, None, ArchiveLimits()))

    assert "src/ReaderTest.php" in files


def test_a_partial_clone_is_archived_in_place_fetching_what_it_lacks(tmp_path: Path) -> None:
    repo, commit = _package(tmp_path / "pkg")
    repo.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "partial"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--filter=blob:none", f"file://{repo.root}", str(clone)],
        check=True,
    )
    reader = repo.git("rev-parse", f"{commit}:src/Reader.php").decode().strip()
    lacked = subprocess.run(
        ["git", "-C", str(clone), "cat-file", "-e", reader],
        capture_output=True,
        env={"GIT_NO_LAZY_FETCH": "1", "PATH": "/usr/bin:/bin"},
    )
    assert lacked.returncode != 0  # the blob is the promisor remote's until needed

    files = _files(GitArchiveSource(str(clone), commit, None, ArchiveLimits()))

    assert files["src/Reader.php"] == (repo.root / "src/Reader.php").read_bytes()
    assert "src/ReaderTest.php" not in files  # in place, its attributes apply
