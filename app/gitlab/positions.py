"""Where an inline comment goes in GitLab's diff: a diff discussion's ``position`` (its
lines as GitLab wants them named) and, for a comment over several lines, its
``line_range`` with GitLab's line codes. Pure."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from app.diff.parse import DiffLine, FileDiff, LineKind
from app.forge.models import InlineComment


def position(
    path: str, old_path: str, refs: dict[str, Any], old_line: int | None, new_line: int | None
) -> dict[str, Any]:
    """The ``position`` of a diff discussion: ``new_line`` alone for an added line,
    ``old_line`` alone for a removed one, both for a line the diff shows unchanged (as
    GitLab wants them). ``refs``: the MR's ``diff_refs``."""
    data: dict[str, Any] = {
        "position_type": "text",
        "base_sha": refs.get("base_sha"),
        "start_sha": refs.get("start_sha"),
        "head_sha": refs.get("head_sha"),
        "new_path": path,
        "old_path": old_path,
    }
    if old_line is not None:
        data["old_line"] = old_line
    if new_line is not None:
        data["new_line"] = new_line
    return data


def line_code(path: str, old_pos: int, new_pos: int) -> str:
    """GitLab's code of a diff line: the path's SHA-1 and the line's old and new
    positions (an added line's old position is the old line it comes before)."""
    return f"{hashlib.sha1(path.encode()).hexdigest()}_{old_pos}_{new_pos}"


def range_end(path: str, line: DiffLine, old_pos: int, new_pos: int) -> dict[str, Any]:
    """One end of a diff discussion's ``line_range``."""
    end: dict[str, Any] = {"line_code": line_code(path, old_pos, new_pos)}
    if line.kind is LineKind.ADDED:
        end["type"] = "new"
    if line.kind is not LineKind.ADDED:
        end["old_line"] = line.old_no
    if line.kind is not LineKind.REMOVED:
        end["new_line"] = line.new_no
    return end


def diff_line(diff: FileDiff, number: int, side: str) -> DiffLine | None:
    """The diff's line ``number`` of the new version (RIGHT), or a removed line of the
    old one (LEFT)."""
    return next((line for line, _, _ in positioned(diff, number, side)), None)


def positioned(diff: FileDiff, number: int, side: str) -> Iterator[tuple[DiffLine, int, int]]:
    """The diff's line ``number`` of ``side`` with GitLab's old and new positions of it
    (an added line's old position is the old line it comes before)."""
    for hunk in diff.hunks:
        old_pos, new_pos = hunk.old_start, hunk.new_start
        for line in hunk.lines:
            if side == "LEFT":
                if line.kind is LineKind.REMOVED and line.old_no == number:
                    yield line, old_pos, new_pos
            elif line.kind is not LineKind.REMOVED and line.new_no == number:
                yield line, old_pos, new_pos
            old_pos += 0 if line.kind is LineKind.ADDED else 1
            new_pos += 0 if line.kind is LineKind.REMOVED else 1


def line_range(diff: FileDiff, comment: InlineComment) -> dict[str, Any] | None:
    """A multi-line comment's ``line_range`` (its first and last lines, both in the
    diff), or None for one line, or a first line the diff does not show."""
    if comment.start_line is None or comment.start_line >= comment.line:
        return None
    first = next(positioned(diff, comment.start_line, comment.side), None)
    last = next(positioned(diff, comment.line, comment.side), None)
    if first is None or last is None:
        return None
    return {
        "start": range_end(diff.path, *first),
        "end": range_end(diff.path, *last),
    }
