"""Parse unified diffs (GitHub's diff endpoint, ``git diff``) into files, hunks and lines.

Handles renames, deletions, binary files, mode-only changes, "\\ No newline at end of
file" markers, CRLF line endings and bytes that are not UTF-8 (replaced, not fatal).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property

import unidiff

from app.errors import ReviewbotError


class DiffError(ReviewbotError):
    """The input is not a unified diff."""


class LineKind(StrEnum):
    """A diff line's kind, as the diff marks it."""

    ADDED = "+"
    REMOVED = "-"
    CONTEXT = " "


class FileStatus(StrEnum):
    """What a diff did to a file (GitHub's word for deleted is "removed")."""

    ADDED = "added"
    DELETED = "deleted"
    MODIFIED = "modified"
    RENAMED = "renamed"


@dataclass(frozen=True)
class DiffLine:
    kind: LineKind
    old_no: int | None
    new_no: int | None
    text: str


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    section: str
    lines: tuple[DiffLine, ...]

    @property
    def added(self) -> list[int]:
        return [
            ln.new_no for ln in self.lines if ln.kind is LineKind.ADDED and ln.new_no is not None
        ]

    @property
    def removed(self) -> list[int]:
        return [
            ln.old_no for ln in self.lines if ln.kind is LineKind.REMOVED and ln.old_no is not None
        ]

    @property
    def deletion_only(self) -> bool:
        return not self.added and bool(self.removed)

    @property
    def new_lines(self) -> list[int]:
        """New-file line numbers a review comment may point at: added and context lines."""
        return [
            ln.new_no
            for ln in self.lines
            if ln.kind is not LineKind.REMOVED and ln.new_no is not None
        ]


@dataclass(frozen=True)
class FileDiff:
    path: str  # the new path (the old one for deleted files)
    old_path: str
    status: FileStatus
    binary: bool
    hunks: tuple[Hunk, ...]

    @property
    def text(self) -> str:
        """Every line of its hunks (added, removed and context), without their marks."""
        return "\n".join(line.text for hunk in self.hunks for line in hunk.lines)

    @property
    def mode_only(self) -> bool:
        return (
            not self.binary
            and not self.hunks
            and self.status in {FileStatus.MODIFIED, FileStatus.RENAMED}
        )

    @cached_property
    def added_lines(self) -> frozenset[int]:
        return frozenset(n for h in self.hunks for n in h.added)

    @cached_property
    def removed_lines(self) -> frozenset[int]:
        return frozenset(n for h in self.hunks for n in h.removed)

    @cached_property
    def commentable_lines(self) -> frozenset[int]:
        return frozenset(n for h in self.hunks for n in h.new_lines)


#: Larger diffs are refused before parsing (GitHub's own diff endpoint stops far below).
MAX_DIFF_BYTES = 20 * 1024 * 1024


def parse_diff(data: bytes | str, max_bytes: int = MAX_DIFF_BYTES) -> list[FileDiff]:
    """Files of a unified diff, in order. Raises ``DiffError`` for text that is not one,
    for a diff over ``max_bytes``, and for a path that is absolute or leaves the tree."""
    size = len(data)
    if size > max_bytes:
        raise DiffError(f"the diff is {size} bytes, over the {max_bytes}-byte limit")
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    text = text.replace("\r\n", "\n")  # CRLF content is kept as content, minus the CR
    if not text.strip():
        return []
    try:
        patch = unidiff.PatchSet(text)
    except unidiff.UnidiffParseError as exc:
        raise DiffError(f"not a valid unified diff: {exc}") from None
    if not len(patch) and ("@@" in text or "diff --git" in text):
        raise DiffError("not a valid unified diff: no file headers found")
    files = [_file(f) for f in patch]
    for diff in files:
        for path in {diff.path, diff.old_path}:
            if not safe_path(path):
                raise DiffError(f"the diff names a path outside the repository: {path!r}")
    return files


def safe_path(path: str) -> bool:
    """True for a relative path that stays inside the tree once normalised."""
    return bool(path) and not path.startswith("/") and ".." not in path.split("/")


def _file(patched: unidiff.PatchedFile) -> FileDiff:
    old = _strip_prefix(patched.source_file)
    new = _strip_prefix(patched.target_file)
    if patched.is_added_file:
        status = FileStatus.ADDED
    elif patched.is_removed_file:
        status = FileStatus.DELETED
    elif patched.is_rename or (old and new and old != new):
        status = FileStatus.RENAMED
    else:
        status = FileStatus.MODIFIED
    path = old if status is FileStatus.DELETED else (new or patched.path)
    return FileDiff(
        path=path,
        old_path=old or path,
        status=status,
        binary=bool(patched.is_binary_file),
        hunks=tuple(_hunk(h) for h in patched),
    )


def _hunk(hunk: unidiff.Hunk) -> Hunk:
    lines = tuple(
        DiffLine(
            LineKind(ln.line_type), ln.source_line_no, ln.target_line_no, ln.value.rstrip("\n")
        )
        for ln in hunk
        if ln.line_type in {"+", "-", " "}
    )
    return Hunk(
        hunk.source_start,
        hunk.source_length,
        hunk.target_start,
        hunk.target_length,
        hunk.section_header,
        lines,
    )


def _strip_prefix(name: str | None) -> str:
    if not name or name == "/dev/null":
        return ""
    return name[2:] if name.startswith(("a/", "b/")) else name
