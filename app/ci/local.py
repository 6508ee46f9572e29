"""A repository on its code host, read first from the clone a CI job checked out.

A commit's files are the same wherever they are read, so a commit the clone has is read
from its git objects (never from the work tree, which a job or a fork may have changed)
and its archive is ``git archive``; everything else, and every commit the clone lacks
(a fork's head under ``pull_request_target``), goes to the host.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO, Any

from app.forge.protocol import RepoHost
from app.git import GitError, LocalRepo, run_git
from app.git_archive import archive_as_committed
from app.indexing.archive import ArchiveTooLarge

OBJECT_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
CHUNK_BYTES = 64 * 1024


class LocalFirst:
    """``RepoHost`` over ``api``, with commits the clone ``local`` holds read from it."""

    def __init__(self, api: RepoHost, local: LocalRepo | None) -> None:
        self.api = api
        self.local = local

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    def _has(self, ref: str) -> bool:
        """Whether ``ref`` is a full object id of a commit the clone holds (a branch name
        is the host's to say: the clone's may be behind)."""
        if self.local is None or not OBJECT_ID.fullmatch(ref):
            return False
        try:
            self.local.resolve(ref)
        except GitError:
            return False
        return True

    def content(self, path: str, ref: str) -> bytes | None:
        if self.local is not None and self._has(ref):
            return self.local.read(ref, path)
        return self.api.content(path, ref)

    def download_tarball(self, ref: str, into: IO[bytes], max_bytes: int) -> int:
        if self.local is None or not self._has(ref):
            return self.api.download_tarball(ref, into, max_bytes)
        return git_archive(self.local, ref, into, max_bytes)


def git_archive(local: LocalRepo, commit: str, into: IO[bytes], max_bytes: int) -> int:
    """``git archive`` of ``commit`` as committed (``app/git_archive.py``; a top folder,
    as the hosts' archives have one) streamed into ``into``; ``ArchiveTooLarge`` past
    ``max_bytes``."""
    written = 0
    with archive_as_committed(local.root, commit, prefix="tree/") as proc:
        assert proc.stdout is not None
        while chunk := proc.stdout.read(CHUNK_BYTES):
            written += len(chunk)
            if written > max_bytes:
                proc.kill()
                raise ArchiveTooLarge(
                    f"the archive of {commit} is larger than {max_bytes} bytes"
                    " (REVIEWBOT_ARCHIVE_MAX_BYTES); nothing was indexed"
                )
            into.write(chunk)
        stderr = proc.stderr.read() if proc.stderr is not None else b""
    if proc.returncode != 0:
        said = stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git archive failed: {said[-1] if said else proc.returncode}")
    return written


def clone_at(folder: Path) -> LocalRepo | None:
    """The git clone whose work tree holds ``folder`` (a CI job's checkout), if any."""
    try:
        top = run_git(folder, "rev-parse", "--show-toplevel").decode().strip()
    except GitError:
        return None
    return LocalRepo(Path(top))
