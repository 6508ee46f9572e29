"""A pull request too large for one model call, split into groups of files that each
fit one: related files together (a changed function's links point into the other file),
larger groups first, first fit; at most ``max_calls`` groups, and the files left over
named with the reason. Lock and generated files are not worth a call of their own and
are left out of a split review (named too). Pure."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.diff.changed import ChangedFunction
from app.diff.parse import FileDiff
from app.indexing.links import stem_of
from app.review.diff_text import file_value, render_file

#: ``file_value`` of lock and generated files.
LOW_VALUE = 1


@dataclass(frozen=True)
class ReviewPlan:
    groups: list[list[FileDiff]]
    not_reviewed: list[str]  # "path: why"


def plan_groups(
    diffs: Sequence[FileDiff],
    changed: Sequence[ChangedFunction],
    budget: int,
    max_calls: int,
    count: Callable[[str], int],
) -> ReviewPlan:
    """One group when everything fits ``budget`` tokens of diff, else groups as above."""
    sizes = {d.path: count(render_file(d)) for d in diffs}
    separator = count("\n\n")
    if sum(sizes.values()) + separator * max(0, len(diffs) - 1) <= budget:
        return ReviewPlan([list(diffs)] if diffs else [], [])
    kept = [d for d in diffs if file_value(d.path) > LOW_VALUE]
    skipped = [f"{d.path}: lock or generated file" for d in diffs if d not in kept]
    bins: list[tuple[list[FileDiff], int]] = []
    for component in sorted(
        related_files(kept, changed),
        key=lambda c: (-sum(sizes[d.path] for d in c), c[0].path),
    ):
        for piece in _pieces(component, sizes, budget, separator):
            cost = sum(sizes[d.path] for d in piece) + separator * (len(piece) - 1)
            for i, (members, used) in enumerate(bins):
                if used + separator + cost <= budget:
                    bins[i] = (members + piece, used + separator + cost)
                    break
            else:
                bins.append((list(piece), cost))
    order = {d.path: i for i, d in enumerate(diffs)}
    groups = [sorted(members, key=lambda d: order[d.path]) for members, _ in bins]
    left = groups[max_calls:]
    skipped += [
        f"{d.path}: over max_review_calls ({max_calls} calls)" for group in left for d in group
    ]
    return ReviewPlan(groups[:max_calls], skipped)


def _pieces(
    component: list[FileDiff], sizes: dict[str, int], budget: int, separator: int
) -> list[list[FileDiff]]:
    """A component that fits as one piece, else its files packed in diff order."""
    total = sum(sizes[d.path] for d in component) + separator * (len(component) - 1)
    if total <= budget:
        return [component]
    pieces: list[list[FileDiff]] = []
    used = 0
    for diff in component:
        if pieces and used + separator + sizes[diff.path] <= budget:
            pieces[-1].append(diff)
            used += separator + sizes[diff.path]
        else:
            pieces.append([diff])
            used = sizes[diff.path]
    return pieces


def related_files(
    diffs: Sequence[FileDiff], changed: Sequence[ChangedFunction]
) -> list[list[FileDiff]]:
    """The files in groups that link to each other (union of each changed function's
    links that resolve into another changed file), each group in diff order."""
    parent = {d.path: d.path for d in diffs}

    def root(path: str) -> str:
        while parent[path] != path:
            parent[path] = parent[parent[path]]
            path = parent[path]
        return path

    for function in changed:
        if function.file_path not in parent:
            continue
        for link in function.uses:
            for other in parent:
                if other != function.file_path and _points_at(link.match, link.target, other):
                    parent[root(other)] = root(function.file_path)
    groups: dict[str, list[FileDiff]] = {}
    for diff in diffs:
        groups.setdefault(root(diff.path), []).append(diff)
    return list(groups.values())


def _points_at(match: str, target: str | None, path: str) -> bool:
    if target is None:
        return False
    if match == "file":
        return path == target
    if match == "module":
        return path == target or path.endswith("/" + target)
    if match == "stem":
        return stem_of(path) == target
    if match in {"dir", "package"}:
        directory = posixpath.dirname(path)
        return directory == target or (bool(directory) and target.endswith("/" + directory))
    return False
