"""``git archive`` of a commit as it was committed: every file, none rewritten.

``git archive`` obeys the ``.gitattributes`` of the tree it archives: ``export-ignore``
leaves files out and ``export-subst`` rewrites ``$Format:...$`` placeholders. Projects
use them to keep their release archives small, Composer packages most of all, which
mark tests, benchmarks and docs ``export-ignore`` (``/**/*Test.php export-ignore``
beside the code): an index read through a plain ``git archive`` never held those files,
so a change's tests were never context and never a search's answer (bench/RESULTS.md,
"Files a release archive leaves out").

The archive here runs on a throwaway git directory that borrows the repository's objects
(``objects/info/alternates``) and whose ``info/attributes`` unsets both attributes for
every path: that file outranks every ``.gitattributes`` (gitattributes(5)). The
repository itself is never written to. Blobs an index would skip for their size are left
out of the archive by path (``oversized_blobs``): git neither reads nor sends them, and a
clone that lacks some (a mirror without its largest files) still archives. A partial
clone is the exception: only git running in it can fetch what it lacks from its
promisor remote, so it is archived in place, its attributes obeyed.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from app.git import GitError, LocalRepo, run_git

#: ``info/attributes`` of the throwaway git directory: no path is left out or rewritten.
AS_COMMITTED = "* -export-ignore -export-subst\n"
#: The settings that make a partial clone (``partial_clone``).
_PROMISOR_KEYS = r"^(extensions\.partialclone|remote\..*\.promisor)$"


@contextmanager
def archive_as_committed(
    root: Path | str, rev: str, prefix: str | None = None, leave_out: Sequence[str] = ()
) -> Iterator[subprocess.Popen[bytes]]:
    """The running ``git archive --format=tar`` of ``rev`` of the repository at ``root``
    (its files under ``prefix``, when given), stdout and stderr piped: every file the
    commit holds, as committed, but the paths ``leave_out`` names. ``GitError`` when
    ``rev`` names no commit there."""
    repo = Path(root)
    commit = LocalRepo(repo).resolve(rev)
    if partial_clone(repo):
        with _archive(["git", "-C", str(repo)], commit, prefix, leave_out) as proc:
            yield proc
        return
    objects = run_git(repo, "rev-parse", "--path-format=absolute", "--git-path", "objects")
    with tempfile.TemporaryDirectory(prefix="reviewbot-archive-") as scratch:
        git_dir = Path(scratch)
        for folder in ("objects/info", "refs", "info"):
            (git_dir / folder).mkdir(parents=True)
        (git_dir / "HEAD").write_text("ref: refs/heads/unused\n")
        (git_dir / "objects" / "info" / "alternates").write_bytes(objects.strip() + b"\n")
        (git_dir / "info" / "attributes").write_text(AS_COMMITTED)
        with _archive(["git", f"--git-dir={git_dir}"], commit, prefix, leave_out) as proc:
            yield proc


@contextmanager
def _archive(
    git: list[str], commit: str, prefix: str | None, leave_out: Sequence[str]
) -> Iterator[subprocess.Popen[bytes]]:
    command = [*git, "archive", "--format=tar"]
    if prefix is not None:
        command.append(f"--prefix={prefix}")
    command.append(commit)
    if leave_out:
        command += ["--", ".", *(f":(exclude,literal){path}" for path in leave_out)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        yield proc


def partial_clone(root: Path | str) -> bool:
    """Whether the repository is a partial clone (a ``remote.<name>.promisor`` remote, or
    ``extensions.partialClone`` as older git wrote it): one that fetches the objects it
    lacks from that remote when git needs them."""
    try:
        found = run_git(Path(root), "config", "--get-regexp", _PROMISOR_KEYS)
    except GitError:  # none set
        return False
    return any(
        line.split(b" ", 1)[-1].strip().lower() not in {b"", b"false"}
        for line in found.splitlines()
    )


def oversized_blobs(root: Path | str, commit: str, max_bytes: int) -> dict[str, int | None]:
    """The files of ``commit`` larger than ``max_bytes`` (path -> size), and those whose
    object the repository lacks (path -> None): what an archive should leave out. Nothing
    for a partial clone, whose listing of sizes would fetch every blob it lacks."""
    if partial_clone(root):
        return {}
    listing = run_git(Path(root), "ls-tree", "-r", "-l", "-z", commit)
    found: dict[str, int | None] = {}
    for entry in listing.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) != 4 or fields[1] != b"blob":
            continue
        size = int(fields[3]) if fields[3].isdigit() else None
        if size is None or size > max_bytes:
            found[name.decode("utf-8", "surrogateescape")] = size
    return found
