"""The two sides of a diff as a ``SourceReader`` for the CLI: the old side as indexed
with the diff's hunks applied for the new one, or a work tree and a revision of its git."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from app.diff.apply import apply_hunks
from app.diff.changed import SourceReader
from app.diff.parse import FileDiff, FileStatus
from app.git import GitError, LocalRepo
from app.indexing.indexed_files import indexed_file_reader


def indexed_sides(
    engine: Engine, repo: str, diffs: list[FileDiff]
) -> tuple[SourceReader, list[str]]:
    """Old side as indexed; new side = old side with the diff's hunks applied. A file the
    diff changes but the index does not hold (a lock file, data, a skipped path) has
    neither side: it is left out, and named in the second value, which fills as the
    files are read."""
    indexed = indexed_file_reader(engine, repo)
    by_path = {d.path: d for d in diffs}
    skipped: list[str] = []

    def read(path: str, side: str) -> bytes | None:
        if side == "old":
            return indexed(path)
        changed = by_path[path]
        old = None if changed.status is FileStatus.ADDED else indexed(changed.old_path)
        if old is None and changed.status != "added":
            skipped.append(changed.path)
            return None
        return apply_hunks(old, changed)

    return read, skipped


def work_tree_sides(root: Path, base: str) -> SourceReader:
    """New side from the work tree at ``root``; old side from ``base`` in its git."""
    git = LocalRepo(root.resolve())
    try:
        git.check()
        has_git = True
    except GitError:
        has_git = False

    def read(path: str, side: str) -> bytes | None:
        if side == "new":
            return git.read(None, path)
        return git.read(base, path) if has_git else None

    return read
