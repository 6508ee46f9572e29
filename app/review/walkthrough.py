"""The walkthrough: one row per changed file saying in a phrase what changed, grouped by
theme when there are many files. The model writes the phrases and themes; a file it
left out (or a review without a model) gets a phrase made from the diff and the
functions it changed. Pure."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.db.chunk_types import ChunkType
from app.diff.changed import ChangedFunction
from app.diff.parse import FileDiff, FileStatus
from app.review.markdown import inert

#: More files than this are grouped by theme.
GROUP_ABOVE = 8
MAX_PHRASE = 200


@dataclass(frozen=True)
class FileChange:
    path: str
    change: str
    theme: str


def walkthrough(
    diffs: Sequence[FileDiff],
    changed: Sequence[ChangedFunction],
    written: Iterable[dict[str, object]] = (),
) -> list[FileChange]:
    """A row for every file of ``diffs``, in diff order: the model's phrase and theme
    (``written``: its ``walkthrough`` items) where it gave one, else one from the diff."""
    said: dict[str, tuple[str, str]] = {}
    for item in written:
        path, change, theme = item.get("path"), item.get("change"), item.get("theme")
        if isinstance(path, str) and isinstance(change, str) and change.strip():
            topic = theme.strip() if isinstance(theme, str) and theme.strip() else ""
            said.setdefault(path.removeprefix("b/"), (change.strip()[:MAX_PHRASE], topic))
    rows = []
    for diff in diffs:
        change, theme = said.get(diff.path, ("", ""))
        mine = [
            c
            for c in changed
            if c.file_path == diff.path and c.chunk.chunk_type != ChunkType.MODULE
        ]
        rows.append(
            FileChange(
                diff.path,
                change or phrase(diff, mine),
                theme or _folder(diff.path),
            )
        )
    return rows


def phrase(diff: FileDiff, functions: Sequence[ChangedFunction]) -> str:
    """What changed in one file, from the diff alone."""
    if diff.binary:
        return "binary file changed"
    if diff.status is FileStatus.RENAMED and not diff.hunks:
        return f"renamed from `{diff.old_path}`"
    if diff.status is FileStatus.DELETED:
        return "deleted"
    parts = []
    if diff.status is FileStatus.ADDED:
        parts.append("new file")
    elif diff.status is FileStatus.RENAMED:
        parts.append(f"renamed from `{diff.old_path}`")
    for status, verb in (("added", "adds"), ("modified", "changes"), ("deleted", "removes")):
        names = [
            f"`{f.qualified_name}`" for f in functions if f.status == status and f.qualified_name
        ]
        if names and not (status == "added" and diff.status is FileStatus.ADDED):
            shown = ", ".join(dict.fromkeys(names[:4]))
            more = f" and {len(names) - 4} more" if len(names) > 4 else ""
            parts.append(f"{verb} {shown}{more}")
    if len(parts) == (1 if diff.status in {"added", "renamed"} else 0):
        added, removed = len(diff.added_lines), len(diff.removed_lines)
        parts.append(f"+{added} -{removed} lines")
    return ", ".join(parts)


def walkthrough_markdown(rows: Sequence[FileChange]) -> str:
    """The table; with more than ``GROUP_ABOVE`` files, a section per theme."""
    if not rows:
        return ""
    if len(rows) <= GROUP_ABOVE:
        body = "\n".join(f"| `{r.path}` | {inert(r.change)} |" for r in rows)
        return f"| file | what changed |\n|---|---|\n{body}"
    themes: dict[str, list[FileChange]] = {}
    for row in rows:
        themes.setdefault(row.theme, []).append(row)
    lines = ["| file | what changed |", "|---|---|"]
    for theme, members in themes.items():
        lines.append(f"| **{inert(theme)}** ({len(members)}) | |")
        lines += [f"| `{r.path}` | {inert(r.change)} |" for r in members]
    return "\n".join(lines)


def _folder(path: str) -> str:
    """A file's theme when the model gave none: its folder."""
    return posixpath.dirname(path) or "(top level)"
