"""Ranking, de-duplication, diversity and token-budget packing of context chunks. Pure."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from app.llm.fences import fence_for


@dataclass(frozen=True)
class Evidence:
    """Why a chunk is a candidate: what each signal found, the best over the changed
    functions. Link and coupling scores are the signals' own (``links.py``,
    ``cochange.py``, ``siblings.py``); ``lexical`` and ``vector`` are relative to the best
    match of the same query (1.0: the best)."""

    callee: float = 0.0  # a changed function uses it (link confidence)
    caller: float = 0.0  # it uses a changed function
    cochange: float = 0.0  # it changed together with a changed function before
    together: int = 0  # how many commits changed both
    sibling: float = 0.0  # an implementation, override or other half of a changed one
    sibling_kind: str = ""  # "implements" | "overrides" | "pair" | "namesake"
    lexical: float = 0.0
    vector: float = 0.0
    words: float = 0.0  # its code shares the changed code's words (BM25, relative)
    removed: float = 0.0  # it still uses a name the change removed (relative)
    found_for: int = 1  # how many changed functions found it
    #: shares of the names on the diff's changed lines its code holds, and of the names
    #: the change removed (``edited_names``): set for every candidate once all are found
    edited: float = 0.0
    replaced: float = 0.0

    def merged(self, other: Evidence) -> Evidence:
        """The evidence of two changed functions for one chunk: the best of each."""
        kind = self.sibling_kind if self.sibling >= other.sibling else other.sibling_kind
        return Evidence(
            callee=max(self.callee, other.callee),
            caller=max(self.caller, other.caller),
            cochange=max(self.cochange, other.cochange),
            together=max(self.together, other.together),
            sibling=max(self.sibling, other.sibling),
            sibling_kind=kind,
            lexical=max(self.lexical, other.lexical),
            vector=max(self.vector, other.vector),
            words=max(self.words, other.words),
            removed=max(self.removed, other.removed),
            found_for=self.found_for + other.found_for,
            edited=max(self.edited, other.edited),
            replaced=max(self.replaced, other.replaced),
        )

    def scaled(self, weight: float) -> Evidence:
        """This evidence with every score multiplied by ``weight``."""
        if weight == 1.0:
            return self
        return replace(
            self,
            callee=self.callee * weight,
            caller=self.caller * weight,
            cochange=self.cochange * weight,
            sibling=self.sibling * weight,
            lexical=self.lexical * weight,
            vector=self.vector * weight,
            words=self.words * weight,
            removed=self.removed * weight,
        )

    @property
    def link(self) -> float:
        return max(self.callee, self.caller)

    @property
    def specific(self) -> bool:
        """Found by a relation to the change (a link, history, a sibling), not only by
        looking alike."""
        return self.link > 0 or self.cochange > 0 or self.sibling > 0 or self.removed > 0

    @property
    def signals(self) -> tuple[str, ...]:
        found = (
            ("history", self.cochange),
            ("lexical", self.lexical),
            ("removed", self.removed),
            ("siblings", self.sibling),
            ("structural", self.link),
            ("vector", self.vector),
            ("words", self.words),
        )
        return tuple(name for name, value in found if value > 0)

    def reasons(self) -> list[str]:
        """Why the chunk is there, in words, strongest relation first."""
        said = []
        if self.callee:
            said.append("called by the change")
        if self.caller:
            said.append("calls the changed code")
        if self.sibling:
            said.append(SIBLING_WORDS.get(self.sibling_kind, "sibling"))
        if self.removed:
            said.append("still uses what the change removed")
        elif self.replaced >= NAMED_SHARE:
            said.append("uses names the change replaced")
        if self.cochange:
            times = "once" if self.together == 1 else f"{self.together} times"
            said.append(f"changed together {times}")
        if self.vector:
            said.append("similar")
        if self.words:
            said.append("uses the same words")
        if self.lexical:
            said.append("shares names")
        if self.edited >= NAMED_SHARE:
            said.append("uses the changed lines' names")
        return said


#: From this share of the changed lines' names (``Evidence.edited``, ``replaced``) on,
#: a chunk's reasons say it uses them.
NAMED_SHARE = 0.5


SIBLING_WORDS = {
    "implements": "sibling: implements the same interface",
    "overrides": "sibling: overrides or is overridden",
    "pair": "the other half of a pair",
    "namesake": "sibling: same method, sibling class",
}


@dataclass(frozen=True, kw_only=True)
class RankingWeights:
    """A weighted sum of the evidence: how a question's search signals are fused
    (``QUESTION_WEIGHTS``), and what the benchmarks rank a signal alone by. A diff's
    context is ranked by the relevance model instead (``relevance.py``); these weights,
    fitted by grid search on the benchmark cases themselves (``bench/fit_ranking.py``),
    were its ranking before and stay its reference in bench/RESULTS.md."""

    link: float = 1.0
    cochange: float = 0.2
    sibling: float = 0.3
    lexical: float = 0.2
    vector: float = 0.15
    #: the words signal (summed over the change's functions) on its own a little, and
    #: where history also found the chunk much more: it says which function of a
    #: co-changing file shares the change's names. Fitted with structural recall held
    #: (co-change R@4000 0.522 -> 0.553, structural 0.817 -> 0.828; bench/RESULTS.md)
    words: float = 0.1
    coupled_words: float = 0.6
    removed: float = 0.05
    shared: float = 0.0  # for each further changed function that found the chunk

    def score(self, e: Evidence) -> float:
        return (
            self.link * e.link
            + self.cochange * e.cochange
            + self.sibling * e.sibling
            + self.lexical * e.lexical
            + self.vector * e.vector
            + (self.words + (self.coupled_words if e.cochange > 0 else 0.0)) * e.words
            + self.removed * e.removed
            + self.shared * (min(e.found_for, 5) - 1)
        )


DEFAULT_WEIGHTS = RankingWeights()
#: A question asked in a PR has only the search signals (``bench/question_bench.py``,
#: fitted by ``bench/fit_ranking.py --question``): the words of the chunks' code say
#: most (MRR 0.310 alone, 0.319 fused so, against 0.283 at 1, 1 and 0.2); the hash
#: embedder's vectors say little, so their fitted 0.1 is kept at 0.4 (0.323 against
#: 0.319) for semantic embedders (bench/RESULTS.md).
QUESTION_WEIGHTS = RankingWeights(lexical=1.0, vector=0.4, words=2.0)


@dataclass(frozen=True)
class ContextChunk:
    """A chunk offered to the reviewer, with why it was chosen."""

    chunk_id: int
    file_path: str
    start_line: int
    end_line: int
    symbol_name: str | None
    qualified_name: str | None
    chunk_type: str
    language: str | None
    summary: str | None
    code: str
    #: what it is ranked by: ``RelevanceModel.rank_score`` for a diff's context,
    #: ``RankingWeights.score`` of the evidence for a question's
    score: float = 0.0
    relevance: float = 0.0  # RelevanceModel.probability: how likely the reviewer needs it
    evidence: Evidence = field(default_factory=Evidence)
    tokens: int = 0
    secondary: bool = False  # tests, docs, examples, CI, config: ranked after code
    #: a window under its definition's signature (``window_heads``): ``start_line`` is
    #: the definition's first line, and this the first line of the window itself
    window_from: int = 0
    #: a window's whole definition (every window of it), for the names it uses
    #: (``edited_names``); '' for any other chunk
    definition_code: str = ""
    #: what the reviewer is shown instead of ``code``: its head and the lines holding the
    #: change's names (``excerpts``); '' to show it whole
    excerpt: str = ""

    @property
    def signals(self) -> tuple[str, ...]:
        return self.evidence.signals

    @property
    def shown_tokens(self) -> int:
        """The tokens of what the reviewer is shown: the count itself once packed, else a
        quarter of the characters of its excerpt or code (the benchmarks' measure)."""
        return self.tokens or math.ceil(len(self.excerpt or self.code) / 4)

    @property
    def link_score(self) -> float:
        return self.evidence.link

    def as_json(self) -> dict[str, object]:
        return {
            "file_path": self.file_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol_name": self.symbol_name,
            "chunk_type": self.chunk_type,
            "score": round(self.score, 6),
            "relevance": round(self.relevance, 6),
            "tokens": self.tokens,
            "signals": list(self.signals),
            "why": self.evidence.reasons(),
            "excerpt": bool(self.excerpt),
        }


def merge_evidence(per_function: Iterable[dict[int, Evidence]]) -> dict[int, Evidence]:
    """One record per chunk over all changed functions (``Evidence.merged``)."""
    merged: dict[int, Evidence] = {}
    for found in per_function:
        for chunk_id, evidence in found.items():
            known = merged.get(chunk_id)
            merged[chunk_id] = evidence if known is None else known.merged(evidence)
    return merged


def rank_key(chunk: ContextChunk) -> tuple[object, ...]:
    """Code before tests, docs and config; within each, by score. Ties break on path and
    line: a stable order."""
    return (chunk.secondary, -chunk.score, chunk.file_path, chunk.start_line)


#: While code the change calls or is called by has candidates left, it gets at least this
#: share of the tokens taken so far: look-alikes, cheap per token as excerpts, would
#: otherwise crowd it out (bench/RESULTS.md, "Look-alike context as excerpts").
LINKED_SHARE = 0.6


def rank_context(
    chunks: Iterable[ContextChunk], max_per_file: int, linked_share: float = LINKED_SHARE
) -> list[ContextChunk]:
    """Best first (``rank_key``); drop chunks overlapping a better one in the same file;
    at most ``max_per_file`` chunks per file that only look alike. Those related to the
    change by a link, history or a sibling are never capped, nor do they count towards
    the cap: a file the change is coupled to often holds several functions that must
    change with it (co-change R@4000 0.736 -> 0.758, bench/RESULTS.md). Then code linked
    to the change keeps ``linked_share`` of the tokens (``_interleaved``)."""
    ordered = sorted(chunks, key=rank_key)
    kept: list[ContextChunk] = []
    alike: dict[str, int] = {}
    for chunk in ordered:
        specific = chunk.evidence.specific
        if not specific and alike.get(chunk.file_path, 0) >= max_per_file:
            continue
        if any(_overlap(k, chunk) for k in kept):
            continue
        kept.append(chunk)
        if not specific:
            alike[chunk.file_path] = alike.get(chunk.file_path, 0) + 1
    return _interleaved(kept, linked_share)


def _interleaved(ranked: Sequence[ContextChunk], share: float) -> list[ContextChunk]:
    """Code linked to the change and the other code, each in its own order, the next
    linked chunk taken whenever the linked ones hold at most ``share`` of the tokens taken
    so far; tests, docs and config after both, in their order."""
    linked = deque(c for c in ranked if c.evidence.link > 0 and not c.secondary)
    other = deque(c for c in ranked if not c.evidence.link > 0 and not c.secondary)
    out: list[ContextChunk] = []
    linked_tokens = taken = 0
    while linked or other:
        if linked and (not other or linked_tokens <= share * taken):
            chunk = linked.popleft()
            linked_tokens += chunk.shown_tokens
        else:
            chunk = other.popleft()
        taken += chunk.shown_tokens
        out.append(chunk)
    return out + [c for c in ranked if c.secondary]


def _overlap(a: ContextChunk, b: ContextChunk) -> bool:
    """The same lines of one file, shown twice. A class chunk carries its header and member
    signatures, not the members' bodies, so it does not overlap its methods; a window
    under its definition's signature shows its own lines, and the windows of one
    definition are one (the best is kept)."""
    if a.file_path != b.file_path or (a.chunk_type == "class") != (b.chunk_type == "class"):
        return False
    if (a.window_from or b.window_from) and _same_definition(a, b):
        return True
    a_from, b_from = a.window_from or a.start_line, b.window_from or b.start_line
    return a_from <= b.end_line and b_from <= a.end_line


def _same_definition(a: ContextChunk, b: ContextChunk) -> bool:
    return (
        a.chunk_type == b.chunk_type == "window"
        and a.qualified_name == b.qualified_name
        and a.start_line == b.start_line
    )


def render_context_block(chunk: ContextChunk) -> str:
    """How a chunk appears in the review prompt (its excerpt, when it has one)."""
    code = chunk.excerpt or chunk.code
    fence = fence_for(code)
    name = chunk.qualified_name or chunk.symbol_name or ""
    kind = f"{chunk.chunk_type}, excerpt" if chunk.excerpt else chunk.chunk_type
    summary = f"\n{chunk.summary}" if chunk.summary else ""
    reasons = chunk.evidence.reasons()
    why = f"\nWhy: {'; '.join(reasons)}." if reasons else ""
    return (
        f"### {chunk.file_path}:{chunk.start_line}-{chunk.end_line} {name} ({kind})"
        f"{why}{summary}\n{fence}{chunk.language or ''}\n{code}\n{fence}"
    )


def pack(
    ranked: Iterable[ContextChunk], budget: int, count_tokens: Callable[[str], int]
) -> tuple[list[ContextChunk], int]:
    """Greedily take chunks in order while their rendered blocks fit ``budget`` tokens.

    A chunk too big for what is left is skipped, and smaller ones after it may still fit.
    The total never exceeds the budget. Returns (packed chunks with token counts, used).
    """
    packed: list[ContextChunk] = []
    used = 0
    for chunk in ranked:
        cost = count_tokens(render_context_block(chunk)) + 1  # +1: the blank line between blocks
        if used + cost <= budget:
            packed.append(replace(chunk, tokens=cost))
            used += cost
    return packed, used
