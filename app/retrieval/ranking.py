"""Ranking, de-duplication, diversity and token-budget packing of context chunks. Pure."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from app.llm.fences import fence_for
from app.retrieval.evidence import Evidence


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
    #: the whole code's estimated tokens, when it is shown as an excerpt (0 otherwise)
    whole_tokens: int = 0

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


def rank_key(chunk: ContextChunk) -> tuple[object, ...]:
    """Code before tests, docs and config; within each, by score. Ties break on path and
    line: a stable order."""
    return (chunk.secondary, -chunk.score, chunk.file_path, chunk.start_line)


def rank_context(chunks: Iterable[ContextChunk], max_per_file: int) -> list[ContextChunk]:
    """Best first (``rank_key``); drop chunks overlapping a better one in the same file;
    at most ``max_per_file`` chunks per file that only look alike. Those related to the
    change by a link, history or a sibling are never capped, nor do they count towards
    the cap: a file the change is coupled to often holds several functions that must
    change with it (bench/RESULTS.md, "Look-alike context as excerpts"). Nothing is
    interleaved after that: the score alone orders code linked to the change and the
    rest (bench/RESULTS.md, "Retrieval on code it has never seen")."""
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
    return kept


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
