"""The diff as the review model sees it, and how a large diff is cut to its budget. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from app.diff.parse import FileDiff
from app.indexing.files import GENERATED_SUFFIXES, LOCK_FILES, MINIFIED_SUFFIXES
from app.indexing.languages import detect_language

_TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|__tests__|testdata)/|(^|/)test_[^/]*$|_test\.[a-z]+$|\.(spec|test)\.[a-z]+$"
    r"|Tests?\.(java|kt|cs)$"
)


def render_file(diff: FileDiff) -> str:
    """One file's hunks with new-file line numbers on added and context lines."""
    header = f"### {diff.path} ({diff.status}"
    header += f" from {diff.old_path})" if diff.status == "renamed" else ")"
    if diff.binary:
        return header + "\n(binary file)"
    if not diff.hunks:
        return header + "\n(mode change only)"
    parts = [header]
    for hunk in diff.hunks:
        parts.append(
            f"@@ -{hunk.old_start},{hunk.old_len} +{hunk.new_start},{hunk.new_len} @@"
            f" {hunk.section}".rstrip()
        )
        for line in hunk.lines:
            number = "" if line.kind == "-" else str(line.new_no)
            parts.append(f"{number:>5} {line.kind} {line.text}")
    return "\n".join(parts)


def render_diff(diffs: Sequence[FileDiff]) -> str:
    return "\n\n".join(render_file(d) for d in diffs)


def file_value(path: str) -> int:
    """How much a file matters to a reviewer: 0 lock, 1 generated, 2 non-code, 3 tests, 4 code."""
    pure = PurePosixPath(path)
    if pure.name in LOCK_FILES or pure.suffix == ".lock":
        return 0
    if pure.name.endswith(GENERATED_SUFFIXES + MINIFIED_SUFFIXES):
        return 1
    if detect_language(path) is None:
        return 2
    if _TEST_PATH.search(path):
        return 3
    return 4


@dataclass(frozen=True)
class FittedDiff:
    files: list[FileDiff]
    omitted: list[str]  # what was left out, for the prompt and the review summary
    tokens: int


def fit_diff(diffs: Sequence[FileDiff], budget: int, count: Callable[[str], int]) -> FittedDiff:
    """Cut the diff to ``budget`` tokens: first deletion-only hunks, then whole files from
    the least valuable (lock, generated, non-code, tests, code; larger first)."""
    files = list(diffs)
    omitted: list[str] = []

    def size() -> int:
        return count(render_diff(files))

    if size() <= budget:
        return FittedDiff(files, omitted, size())
    trimmed: list[FileDiff] = []
    for diff in files:
        kept = tuple(h for h in diff.hunks if not h.deletion_only)
        if len(kept) != len(diff.hunks):
            omitted.append(f"{diff.path}: {len(diff.hunks) - len(kept)} deletion-only hunk(s)")
        if kept or not diff.hunks:
            trimmed.append(replace(diff, hunks=kept))
    files = trimmed
    order = sorted(files, key=lambda d: (file_value(d.path), -count(render_file(d)), d.path))
    for diff in order:
        if size() <= budget:
            break
        files.remove(diff)
        omitted.append(f"{diff.path}: whole file (diff too large)")
    return FittedDiff(files, omitted, size())
