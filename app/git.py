"""Git: the one place reviewbot starts a git process (``run_git``), and a local
repository as the CLI's source of diffs, file versions and base trees (``LocalRepo``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from app.errors import ReviewbotError


class GitError(ReviewbotError):
    """A git command failed."""


def run_git(root: Path, *args: str, stdin: bytes | None = None, timeout: float = 120) -> bytes:
    """git's stdout for ``args`` run in ``root``; ``GitError`` with git's last words when
    it fails, is missing or times out."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            input=stdin,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {args[0]} failed: {type(exc).__name__}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
    return done.stdout


class LocalRepo:
    """Read-only access to the git repository at ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._commits: dict[str, str] = {}

    def git(self, *args: str) -> bytes:
        return self.git_with_input(None, *args)

    def git_with_input(self, stdin: bytes | None, *args: str) -> bytes:
        """Run git in the repository; its stdout, or ``GitError`` with git's last words."""
        return run_git(self.root, *args, stdin=stdin)

    def check(self) -> None:
        """Raise ``GitError`` unless ``root`` is inside a git work tree."""
        if not self.root.is_dir():
            raise GitError(f"{self.root} is not a directory")
        self.git("rev-parse", "--is-inside-work-tree")

    def resolve(self, rev: str) -> str:
        """The commit ``rev`` names; ``GitError`` naming ``rev`` when it names none."""
        if rev not in self._commits:
            try:
                found = self.git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
            except GitError:
                raise GitError(f"unknown revision {rev!r} in {self.root}") from None
            self._commits[rev] = found.decode().strip()
        return self._commits[rev]

    def default_base(self) -> str:
        """The merge-base of HEAD with the default branch (origin's HEAD, main or master)."""
        for candidate in ("origin/HEAD", "origin/main", "origin/master", "main", "master"):
            try:
                target = self.resolve(candidate)
            except GitError:
                continue
            base = self.git("merge-base", "HEAD", target).decode().strip()
            if base != self.resolve("HEAD"):
                return base
        try:  # on the default branch itself: review the last commit
            return self.resolve("HEAD~1")
        except GitError:
            raise GitError("cannot choose a base: give --base REF") from None

    def diff(self, base: str, head: str | None) -> bytes:
        """``git diff`` from ``base`` to ``head`` (None: the working tree), with renames."""
        args = ["diff", "--no-color", "--no-ext-diff", "-M", "--full-index", base]
        return self.git(*args, *([head] if head else []))

    def read(self, rev: str | None, path: str) -> bytes | None:
        """A file at ``rev`` (None: the working tree), or None when it does not exist there.

        Raises ``GitError`` when ``rev`` names no commit (a mistyped ``--base`` is an
        error, not a tree where every file is new), and for paths outside the tree.
        """
        if rev is None:
            full = (self.root / path).resolve()
            if not full.is_relative_to(self.root.resolve()):
                raise GitError(f"{path!r} is outside the repository {self.root}")
            return full.read_bytes() if full.is_file() else None
        commit = self.resolve(rev)
        if "\n" in path:  # cannot be named on cat-file's input
            return None
        out = self.git_with_input(f"{commit}:{path}\n".encode(), "cat-file", "--batch")
        header, _, body = out.partition(b"\n")
        fields = header.split()
        if len(fields) != 3 or fields[1] != b"blob":  # "<name> missing", or a folder
            return None
        return body[: int(fields[2])]

    def messages(self, base: str, head: str | None) -> tuple[str, str]:
        """A title and description for a local review, from the commits being reviewed."""
        log = self.git("log", "--format=%s%n%b%x00", f"{base}..{head or 'HEAD'}").decode(
            "utf-8", "replace"
        )
        commits = [c.strip() for c in log.split("\x00") if c.strip()]
        if not commits:
            return "Uncommitted changes", ""
        title = commits[-1].splitlines()[0]  # the oldest commit names the change
        return title, "\n\n".join(reversed(commits))
