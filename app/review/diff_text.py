"""The diff as the review model sees it, and how a large diff is cut to its budget. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from app.diff.parse import FileDiff, FileStatus, LineKind
from app.indexing.files import GENERATED_SUFFIXES, LOCK_FILES, MINIFIED_SUFFIXES
from app.indexing.languages import detect_language
from app.wording import counted

_TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|__tests__|testdata)/|(^|/)test_[^/]*$|_test\.[a-z]+$|\.(spec|test)\.[a-z]+$"
    r"|Tests?\.(java|kt|cs)$"
)


def render_file(diff: FileDiff) -> str:
    """One file's hunks with new-file line numbers on added and context lines."""
    header = f"### {diff.path} ({diff.status}"
    header += f" from {diff.old_path})" if diff.status is FileStatus.RENAMED else ")"
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
            number = "" if line.kind is LineKind.REMOVED else str(line.new_no)
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
    whole = count(render_diff(files))
    if whole <= budget:
        return FittedDiff(files, [], whole)
    omitted: list[str] = []
    trimmed: list[FileDiff] = []
    for diff in files:
        kept = tuple(h for h in diff.hunks if not h.deletion_only)
        if len(kept) != len(diff.hunks):
            omitted.append(
                f"{diff.path}: {counted(len(diff.hunks) - len(kept), 'deletion-only hunk')}"
            )
        if kept or not diff.hunks:
            trimmed.append(replace(diff, hunks=kept))
    sizes = [count(render_file(d)) for d in trimmed]
    order = sorted(
        range(len(trimmed)), key=lambda i: (file_value(trimmed[i].path), -sizes[i], trimmed[i].path)
    )
    dropped = _files_to_drop(trimmed, sizes, order, budget, count)
    omitted += [f"{trimmed[i].path}: whole file (diff too large)" for i in order[:dropped]]
    gone = set(order[:dropped])
    left = [d for i, d in enumerate(trimmed) if i not in gone]
    return FittedDiff(left, omitted, count(render_diff(left)))


def _files_to_drop(
    files: list[FileDiff],
    sizes: list[int],
    order: list[int],
    budget: int,
    count: Callable[[str], int],
) -> int:
    """The fewest files, taken in ``order``, whose removal fits the diff in ``budget``.

    The files' own counts add up to about the whole's, which finds the answer without
    counting the whole diff once per file; the whole is then counted only to confirm it
    (a boundary between files may tokenize a little differently)."""

    def fits(dropped: int) -> bool:
        gone = set(order[:dropped])
        return count(render_diff([d for i, d in enumerate(files) if i not in gone])) <= budget

    separator = count("\n\n")
    estimate = sum(sizes) + separator * max(0, len(files) - 1)
    dropped = 0
    while dropped < len(order) and estimate > budget:
        estimate -= sizes[order[dropped]] + separator
        dropped += 1
    if fits(dropped):
        while dropped > 0 and fits(dropped - 1):
            dropped -= 1
    else:
        while dropped < len(order) and not fits(dropped):
            dropped += 1
    return dropped
