"""Git: the one place reviewbot starts a git process (``run_git``), and a local
repository as the CLI's source of diffs, file versions and base trees (``LocalRepo``)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.errors import ReviewbotError


class GitError(ReviewbotError):
    """A git command failed."""


def run_git(
    root: Path,
    *args: str,
    stdin: bytes | None = None,
    timeout: float = 120,
    env: Mapping[str, str] | None = None,
) -> bytes:
    """git's stdout for ``args`` run in ``root`` (``env`` added to the environment);
    ``GitError`` with git's last words when it fails, is missing or times out."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            input=stdin,
            capture_output=True,
            timeout=timeout,
            check=False,
            env={**os.environ, **env} if env else None,
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {args[0]} failed: {type(exc).__name__}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
    return done.stdout


@dataclass(frozen=True)
class LoggedCommit:
    """A commit on the first-parent line, with the paths it changed against its parent."""

    sha: str
    parent: str | None  # the first parent; None for a root (or a shallow clone's edge)
    committed_at: int  # unix seconds
    paths: tuple[str, ...]


@dataclass(frozen=True)
class ChangedLines:
    """Where a commit changed one file, on the file's new side: the added lines, and the
    lines after which lines were only removed. ``blob`` is the new version's object id."""

    path: str
    blob: str
    added: tuple[int, ...]
    removed_after: tuple[int, ...]


def parse_log(out: bytes) -> list[LoggedCommit]:
    """``git log -z --name-only --format=%x1e%H%x1f%P%x1f%ct`` output as commits. Pure."""
    commits = []
    for record in out.split(b"\x1e")[1:]:
        header, _, names = record.partition(b"\0")
        sha, parents, when = header.decode().split("\x1f")
        paths = tuple(
            p.decode("utf-8", "surrogateescape") for p in names.lstrip(b"\n").split(b"\0") if p
        )
        first = parents.split()[0] if parents.split() else None
        commits.append(LoggedCommit(sha, first, int(when), paths))
    return commits


_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_NEW_BLOB = re.compile(rb"^index [0-9a-f]+\.\.([0-9a-f]+)", re.MULTILINE)


def parse_patches(out: bytes) -> dict[str, list[ChangedLines]]:
    """``git diff-tree --stdin -p -U0 --full-index`` output, per commit: where each file
    still present on the new side changed. Quoted (unusual) paths are left out. Pure."""
    found: dict[str, list[ChangedLines]] = {}
    commit = ""
    for part in re.split(rb"^(?=diff --git |[0-9a-f]{40}$|[0-9a-f]{64}$)", out, flags=re.M):
        if not part.startswith(b"diff --git "):
            sha = part.strip().decode()
            if sha:
                commit = sha
                found.setdefault(commit, [])
            continue
        target = re.search(rb"^\+\+\+ b/(.*)$", part, re.MULTILINE)
        blob = _NEW_BLOB.search(part)
        if commit == "" or target is None or blob is None or target.group(1).startswith(b'"'):
            continue  # a deleted file, a binary one, or a quoted path
        added: list[int] = []
        removed_after: list[int] = []
        for match in _HUNK.finditer(part):
            start, count = int(match.group(1)), int(match.group(2) or b"1")
            if count:
                added.extend(range(start, start + count))
            else:
                removed_after.append(start)
        path = target.group(1).decode("utf-8", "surrogateescape")
        found[commit].append(
            ChangedLines(path, blob.group(1).decode(), tuple(added), tuple(removed_after))
        )
    return found


#: Where a local review looks for the default branch, in order.
DEFAULT_BRANCHES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")


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
        """The commit ``rev`` names; ``GitError`` naming ``rev`` when it names none.
        Object ids are looked up once; names (``HEAD``, branches) each time, since they
        move."""
        if rev in self._commits:
            return self._commits[rev]
        try:
            found = self.git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        except GitError:
            raise GitError(f"unknown revision {rev!r} in {self.root}") from None
        sha = found.decode().strip()
        if _OBJECT_ID.fullmatch(rev):
            self._commits[rev] = sha
        return sha

    def default_base(self, head: str | None = None) -> str:
        """The base of a local review of ``head`` (None: the work tree) when none is given:
        the merge-base with the default branch (the first of origin's HEAD, main and master
        that exists), whatever branch HEAD is on. When that merge-base is the head itself
        (on the default branch, or on a new branch with no commit of its own), the
        uncommitted changes are the change (base HEAD); without any, the last commit."""
        tip = self.resolve(head or "HEAD")
        branch = next((b for b in DEFAULT_BRANCHES if self._names_commit(b)), None)
        base = self.git("merge-base", tip, branch).decode().strip() if branch else tip
        if base != tip:
            return base
        if head is None and self.git("diff", "--name-only", "HEAD").strip():
            return tip
        try:
            return self.resolve(f"{tip}~1")
        except GitError:
            raise GitError(
                "nothing to review: no uncommitted change, and the last commit has no"
                " parent; give --base REF"
            ) from None

    def _names_commit(self, rev: str) -> bool:
        try:
            self.resolve(rev)
        except GitError:
            return False
        return True

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

    def first_parent_log(self, until: str, after: str | None, limit: int) -> list[LoggedCommit]:
        """At most ``limit`` commits of ``until``'s first-parent line, newest first, back
        to (not including) ``after``; a merge lists what it changed against its first
        parent (the pull request it merged)."""
        out = self.git(
            "-c",
            "core.quotePath=false",
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "--no-renames",
            "--name-only",
            "-z",
            "--format=%x1e%H%x1f%P%x1f%ct",
            f"-n{limit}",
            until,
            *([f"^{after}"] if after else []),
            "--",
        )
        return parse_log(out)

    def changed_lines(
        self, commits: Sequence[LoggedCommit], pathspecs: Sequence[str] = ()
    ) -> dict[str, list[ChangedLines]]:
        """Where each commit changed its files (those matching ``pathspecs``, if any)
        against its first parent, in one git process for all of them."""
        pairs = "".join(f"{c.sha} {c.parent}\n" for c in commits if c.parent)
        if not pairs:
            return {}
        out = self.git_with_input(
            pairs.encode(),
            "-c",
            "core.quotePath=false",
            "diff-tree",
            "--stdin",
            "-p",
            "-U0",
            "--no-renames",
            "--no-color",
            "--no-ext-diff",
            "--full-index",
            "--",
            *pathspecs,
        )
        return parse_patches(out)

    def blobs(self, object_ids: Sequence[str]) -> dict[str, bytes]:
        """The contents of the blobs named (one git process); missing ones are left out."""
        if not object_ids:
            return {}
        out = self.git_with_input(
            "".join(f"{oid}\n" for oid in object_ids).encode(), "cat-file", "--batch"
        )
        found: dict[str, bytes] = {}
        offset = 0
        while offset < len(out):
            end = out.index(b"\n", offset)
            fields = out[offset:end].split()
            offset = end + 1
            if len(fields) != 3:  # "<oid> missing"
                continue
            size = int(fields[2])
            if fields[1] == b"blob":
                found[fields[0].decode()] = out[offset : offset + size]
            offset += size + 1
        return found


#: Repository keys as code hosts allow them (GitHub's owner/name, GitLab's
#: instance[:port]/group/.../project): what may become a folder name here.
_REPO_NAME = re.compile(r"[A-Za-z0-9_.:-]+(/[A-Za-z0-9_.-]+)+")


def clone_path(data_dir: Path, repo: str) -> Path:
    """Where the bare clone of ``repo``'s history lives (``owner+name.git``)."""
    if not _REPO_NAME.fullmatch(repo) or any(p in {".", ".."} for p in repo.split("/")):
        raise GitError(f"not a repository name: {repo!r}")
    return data_dir / "history" / (repo.replace("/", "+") + ".git")
