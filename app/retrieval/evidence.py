"""What the retrieval signals found for a candidate chunk (``Evidence``), and the one
registry of those signals (``SIGNALS``): each signal's name as settings and the review's
JSON say it, its evidence fields, how strong its finding is, whether it relates the
chunk to the change or only finds it alike, and the words a reviewer reads. Adding or
removing a signal is its entry here (with its fields on ``Evidence``), the statement
that finds it (``candidates.function_evidence``) and its name in
``config.RetrievalSignal``; ``tests/unit/test_evidence.py`` holds them together. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any


class SiblingKind(StrEnum):
    """How a sibling relates to the changed function (``app/retrieval/siblings.py``)."""

    OVERRIDES = "overrides"  # the same method in a base class or a subclass
    IMPLEMENTS = "implements"  # another implementation of an interface it implements
    NAMESAKE = "namesake"  # the same method of a sibling class
    PAIR = "pair"  # the other half of a pair (encode/decode)


@dataclass(frozen=True)
class Evidence:
    """Why a chunk is a candidate: what each signal found, the best over the changed
    functions. Link and coupling scores are the signals' own (``links.py``,
    ``cochange.py``, ``siblings.py``); the search signals' are relative to the best match
    of the same query (1.0: the best)."""

    callee: float = 0.0  # a changed function uses it (link confidence)
    caller: float = 0.0  # it uses a changed function
    cochange: float = 0.0  # it changed together with a changed function before
    together: int = 0  # how many commits changed both
    sibling: float = 0.0  # an implementation, override or other half of a changed one
    sibling_kind: str = ""  # a ``SiblingKind``; '' when no sibling found it
    lexical: float = 0.0
    vector: float = 0.0
    words: float = 0.0  # its code shares the change's words (BM25, relative)
    removed: float = 0.0  # it still uses a name the change removed (relative)
    found_for: int = 1  # how many changed functions found it
    #: shares of the names on the diff's changed lines its code holds, and of the names
    #: the change removed (``edited_names``): set for every candidate once all are found
    edited: float = 0.0
    replaced: float = 0.0

    def merged(self, other: Evidence) -> Evidence:
        """The evidence of two changed functions for one chunk: the best of each (the
        sibling kind of the better sibling), and the count of functions summed."""
        best = {f.name: max(getattr(self, f.name), getattr(other, f.name)) for f in _NUMBERS}
        kind = self.sibling_kind if self.sibling >= other.sibling else other.sibling_kind
        return Evidence(**best, sibling_kind=kind, found_for=self.found_for + other.found_for)

    def scaled(self, weight: float) -> Evidence:
        """This evidence with every signal's score multiplied by ``weight``."""
        if weight == 1.0:
            return self
        return replace(self, **{name: getattr(self, name) * weight for name in _SCORES})

    @property
    def link(self) -> float:
        return max(self.callee, self.caller)

    @property
    def specific(self) -> bool:
        """Found by a relation to the change (a link, history, a sibling, a removed name),
        not only by looking alike."""
        return any(s.relates and s.strength(self) > 0 for s in SIGNALS)

    @property
    def signals(self) -> tuple[str, ...]:
        """The names of the signals that found it, alphabetically."""
        return tuple(sorted(s.name for s in SIGNALS if s.strength(self) > 0))

    def reasons(self) -> list[str]:
        """Why the chunk is there, in words, strongest relation first."""
        said = [words for s in SIGNALS for words in s.reasons(self)]
        if self.edited >= NAMED_SHARE:
            said.append("uses the changed lines' names")
        return said


@dataclass(frozen=True)
class Signal:
    """One retrieval signal as the rest of retrieval knows it."""

    name: str
    fields: tuple[str, ...]  # its ``Evidence`` fields
    strength: Callable[[Evidence], float]  # > 0: it found the chunk
    #: it relates the chunk to the change (a look-alike is capped per file, this is not)
    relates: bool
    reasons: Callable[[Evidence], list[str]]


#: From this share of the changed lines' names (``Evidence.edited``, ``replaced``) on,
#: a chunk's reasons say it uses them.
NAMED_SHARE = 0.5

SIBLING_WORDS: dict[str, str] = {
    SiblingKind.IMPLEMENTS: "sibling: implements the same interface",
    SiblingKind.OVERRIDES: "sibling: overrides or is overridden",
    SiblingKind.PAIR: "the other half of a pair",
    SiblingKind.NAMESAKE: "sibling: same method, sibling class",
}


def _structural(e: Evidence) -> list[str]:
    return ["called by the change"] * bool(e.callee) + ["calls the changed code"] * bool(e.caller)


def _removed(e: Evidence) -> list[str]:
    if e.removed:
        return ["still uses what the change removed"]
    return ["uses names the change replaced"] if e.replaced >= NAMED_SHARE else []


def _history(e: Evidence) -> list[str]:
    if not e.cochange:
        return []
    return [f"changed together {'once' if e.together == 1 else f'{e.together} times'}"]


def _said(field: str, words: str) -> Callable[[Evidence], list[str]]:
    return lambda e: [words] if getattr(e, field) else []


#: Every signal, in the order a chunk's reasons are said (strongest relation first).
SIGNALS: tuple[Signal, ...] = (
    Signal("structural", ("callee", "caller"), lambda e: e.link, True, _structural),
    Signal(
        "siblings",
        ("sibling", "sibling_kind"),
        lambda e: e.sibling,
        True,
        lambda e: [SIBLING_WORDS.get(e.sibling_kind, "sibling")] if e.sibling else [],
    ),
    Signal("removed", ("removed",), lambda e: e.removed, True, _removed),
    Signal("history", ("cochange", "together"), lambda e: e.cochange, True, _history),
    Signal("vector", ("vector",), lambda e: e.vector, False, _said("vector", "similar")),
    Signal("words", ("words",), lambda e: e.words, False, _said("words", "uses the same words")),
    Signal("lexical", ("lexical",), lambda e: e.lexical, False, _said("lexical", "shares names")),
)
SIGNAL_NAMES = tuple(s.name for s in SIGNALS)
#: The numeric fields merged by their best, and the signals' scores a weight scales.
_NUMBERS = tuple(f for f in fields(Evidence) if f.name not in {"sibling_kind", "found_for"})
_SCORES = tuple(
    name
    for s in SIGNALS
    for name in s.fields
    if name not in {"together", "sibling_kind"}  # a count and a kind, not scores
)


def signal(name: str) -> Signal:
    """The registered signal called ``name``."""
    return next(s for s in SIGNALS if s.name == name)


def cleared(evidence: Evidence, keep: Iterable[str]) -> Evidence:
    """``evidence`` with the fields of every signal not in ``keep`` cleared: what the
    chunk's evidence is when only those signals run."""
    kept = set(keep)
    gone: dict[str, Any] = {
        name: "" if name == "sibling_kind" else 0
        for s in SIGNALS
        if s.name not in kept
        for name in s.fields
    }
    return replace(evidence, **gone) if gone else evidence


def merge_evidence(per_function: Iterable[dict[int, Evidence]]) -> dict[int, Evidence]:
    """One record per chunk over all changed functions (``Evidence.merged``)."""
    merged: dict[int, Evidence] = {}
    for found in per_function:
        for chunk_id, evidence in found.items():
            known = merged.get(chunk_id)
            merged[chunk_id] = evidence if known is None else known.merged(evidence)
    return merged
