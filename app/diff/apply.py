"""A file's new side from its old side and the diff's hunks, in memory. Pure."""

from __future__ import annotations

from app.diff.parse import DiffError, FileDiff, FileStatus, Hunk, LineKind


def apply_hunks(old: bytes | None, diff: FileDiff) -> bytes | None:
    """The new side of ``diff``'s file, given its old side (None: the file is new).

    Returns None for a deleted file. Raises ``DiffError`` naming the file and the hunk
    when a context or removed line does not match the old side.
    """
    if diff.status is FileStatus.DELETED:
        return None
    old_lines = [] if old is None else old.decode("utf-8", "replace").splitlines()
    new_lines: list[str] = []
    copied = 0  # old lines consumed so far
    for hunk in diff.hunks:
        # "-N,0" inserts after old line N; otherwise the hunk starts at old line N.
        start = hunk.old_start if hunk.old_len == 0 else hunk.old_start - 1
        if start < copied or start > len(old_lines):
            raise _not_applying(diff, hunk, "it starts outside the file")
        new_lines += old_lines[copied:start]
        copied = start
        for line in hunk.lines:
            if line.kind is LineKind.ADDED:
                new_lines.append(line.text)
                continue
            if copied >= len(old_lines) or old_lines[copied].rstrip("\r") != line.text:
                raise _not_applying(diff, hunk, f"old line {copied + 1} differs")
            if line.kind is LineKind.CONTEXT:
                new_lines.append(old_lines[copied])
            copied += 1
    new_lines += old_lines[copied:]
    return ("\n".join(new_lines) + "\n").encode() if new_lines else b""


def _not_applying(diff: FileDiff, hunk: Hunk, why: str) -> DiffError:
    header = f"@@ -{hunk.old_start},{hunk.old_len} +{hunk.new_start},{hunk.new_len} @@"
    return DiffError(f"{diff.path}: hunk {header} does not apply to the indexed version ({why})")
