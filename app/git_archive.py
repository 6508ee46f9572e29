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
clone that lacks them (a partial clone, a mirror without its largest files) still
archives.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from app.git import LocalRepo, run_git

#: ``info/attributes`` of the throwaway git directory: no path is left out or rewritten.
AS_COMMITTED = "* -export-ignore -export-subst\n"


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
    objects = run_git(repo, "rev-parse", "--path-format=absolute", "--git-path", "objects")
    with tempfile.TemporaryDirectory(prefix="reviewbot-archive-") as scratch:
        git_dir = Path(scratch)
        for folder in ("objects/info", "refs", "info"):
            (git_dir / folder).mkdir(parents=True)
        (git_dir / "HEAD").write_text("ref: refs/heads/unused\n")
        (git_dir / "objects" / "info" / "alternates").write_bytes(objects.strip() + b"\n")
        (git_dir / "info" / "attributes").write_text(AS_COMMITTED)
        command = ["git", f"--git-dir={git_dir}", "archive", "--format=tar"]
        if prefix is not None:
            command.append(f"--prefix={prefix}")
        command.append(commit)
        if leave_out:
            command += ["--", ".", *(f":(exclude,literal){path}" for path in leave_out)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            yield proc


def oversized_blobs(root: Path | str, commit: str, max_bytes: int) -> dict[str, int | None]:
    """The files of ``commit`` larger than ``max_bytes`` (path -> size), and those whose
    object the repository lacks (path -> None): what an archive should leave out."""
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
