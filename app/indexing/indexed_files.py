"""Files as they were indexed, read back without a work tree.

An index run records what it read: a folder (``reviewbot index DIR``) or a commit of a
local repository (``reviewbot review``). A file is read back from there only when its
content hash is still the one indexed, so the old side of a diff is exactly the version
the index holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine, text

from app.db.queries.repositories import find_repository, not_indexed_message
from app.errors import ConfigError
from app.git import GitError, LocalRepo
from app.indexing import store

IndexedReader = Callable[[str], bytes | None]


def indexed_file_reader(engine: Engine, repo: str) -> IndexedReader:
    """``read(path)``: the indexed version of ``path``, or None when the index has no such
    file. Raises ``ConfigError`` when the repository is not indexed, or when the tree it
    was indexed from is gone or has changed that file since."""
    with engine.connect() as conn:
        repo_id = find_repository(conn, repo)
        if repo_id is None:
            raise ConfigError(not_indexed_message(conn, repo))
        known = store.known_files(conn, repo_id)
        run = conn.execute(
            text(
                "SELECT stats->>'root' AS root, commit_sha FROM index_runs"
                " WHERE repository_id = :r AND status = 'succeeded' ORDER BY id DESC LIMIT 1"
            ),
            {"r": repo_id},
        ).one_or_none()
    if run is None or not run.root:
        raise ConfigError(f"repository {repo!r} has no finished index run to read files from")
    fetch = _from_folder(Path(run.root)) if Path(run.root).is_dir() else None
    if fetch is None and "@" in run.root and run.commit_sha:
        fetch = _from_commit(Path(run.root.rsplit("@", 1)[0]), run.commit_sha)
    if fetch is None:
        raise ConfigError(
            f"the tree {repo!r} was indexed from ({run.root}) is not here; pass --root"
        )

    def read(path: str) -> bytes | None:
        indexed = known.get(path)
        if indexed is None:
            return None
        data = fetch(path)
        if data is None or hashlib.sha256(data).hexdigest() != indexed.content_hash:
            raise ConfigError(
                f"{path} has changed since {repo!r} was indexed from {run.root};"
                " re-index it or pass --root"
            )
        return data

    return read


def _from_folder(root: Path) -> Callable[[str], bytes | None]:
    def fetch(path: str) -> bytes | None:
        full = (root / path).resolve()
        inside = full.is_relative_to(root.resolve())
        return full.read_bytes() if inside and full.is_file() else None

    return fetch


def _from_commit(git_dir: Path, commit: str) -> Callable[[str], bytes | None] | None:
    repo = LocalRepo(git_dir)
    try:
        repo.resolve(commit)
    except GitError:
        return None
    return lambda path: repo.read(commit, path)
