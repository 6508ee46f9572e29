"""Which candidates use the names the diff's changed lines use. Pure.

A function the author forgot to change usually holds the very names the change touched:
the call that was replaced, the key that was renamed, the field that was added beside
it. Its co-changing file's other functions, and the lookalikes the search signals find,
hold the names of the whole changed function but fewer of its changed lines'. So every
candidate, whatever found it, gets two shares of the changed lines' names (each name
weighed by its inverse document frequency among the candidates, so a name every
candidate has weighs nothing):

- ``edited``: of the names on the added and removed lines;
- ``replaced``: of the names on removed lines that no added line has (what the change
  moved away from, which the forgotten places still use).

A window of a long function is judged by its whole definition's names: the forgotten
call may lie in another window than the one a signal found.

Measured on both benchmarks' dumps, held out by repository: bench/RESULTS.md, "The
changed lines' names".
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace

from app.diff.parse import FileDiff
from app.retrieval.context_chunk import ContextChunk

#: An identifier of three characters or more (``names`` leaves the keywords out).
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
#: Keywords and names every language's code is full of.
_NOISE = frozenset(
    "self this return def func function const let var true false none null nil new await "
    "async import from class public private static void int str string bool float and or "
    "not for while else elif try except catch finally raise throw with pass break continue "
    "case switch default export type interface struct package range err any".split()
)


def names(text: str) -> frozenset[str]:
    """The identifiers of ``text`` (three characters or more, keywords left out)."""
    return frozenset(n for n in IDENTIFIER.findall(text) if n.lower() not in _NOISE)


@dataclass(frozen=True)
class EditedNames:
    """The names on a diff's changed lines."""

    added: frozenset[str]
    removed: frozenset[str]

    @classmethod
    def of(cls, diffs: Iterable[FileDiff], paths: Collection[str]) -> EditedNames:
        """The names on the changed lines of the diffs of ``paths`` (the code files whose
        functions are searched: a lock file's or a README's lines say nothing here)."""
        added: set[str] = set()
        removed: set[str] = set()
        for diff in diffs:
            if diff.path not in paths:
                continue
            for hunk in diff.hunks:
                for line in hunk.lines:
                    if line.kind == "+":
                        added |= names(line.text)
                    elif line.kind == "-":
                        removed |= names(line.text)
        return cls(frozenset(added), frozenset(removed))

    @property
    def edited(self) -> frozenset[str]:
        return self.added | self.removed

    @property
    def replaced(self) -> frozenset[str]:
        return self.removed - self.added


def shares(codes: Sequence[str], edited: EditedNames) -> list[tuple[float, float]]:
    """(edited, replaced) of each code: the share of each name set's weight it holds,
    a name weighing log(1 + n / (1 + the codes holding it))."""
    if not edited.edited:
        return [(0.0, 0.0)] * len(codes)
    wanted = edited.edited  # only these are kept: the noise test is theirs already
    held = [frozenset(IDENTIFIER.findall(code)) & wanted for code in codes]
    counts = Counter(name for found in held for name in found)
    n = len(codes) + 1
    weight = {name: math.log(1 + n / (1 + counts[name])) for name in edited.edited}
    total_edited = sum(weight.values())
    total_replaced = sum(weight[name] for name in edited.replaced)
    out = []
    for found in held:
        share_edited = sum(weight[name] for name in found) / total_edited
        share_replaced = (
            sum(weight[name] for name in found & edited.replaced) / total_replaced
            if total_replaced
            else 0.0
        )
        out.append((share_edited, share_replaced))
    return out


def with_edited_names(chunks: Sequence[ContextChunk], edited: EditedNames) -> list[ContextChunk]:
    """``chunks`` with ``edited`` and ``replaced`` in their evidence; a window is judged by
    its whole definition's names (a long function's forgotten call may lie in another
    window than the one a signal found)."""
    found = shares([c.definition_code or c.code for c in chunks], edited)
    return [
        replace(c, evidence=replace(c.evidence, edited=e, replaced=r))
        for c, (e, r) in zip(chunks, found, strict=True)
    ]
