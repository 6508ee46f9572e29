"""Ranking, de-duplication, diversity and token-budget packing of context chunks. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from app.llm.fences import fence_for


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
    score: float = 0.0
    signals: tuple[str, ...] = ()
    found_for: int = 0  # how many changed functions retrieved it
    tokens: int = 0
    link_score: float = 0.0  # the structural signal: a resolved link's confidence
    secondary: bool = False  # tests, docs, examples, CI, config: ranked after code

    def as_json(self) -> dict[str, object]:
        return {
            "file_path": self.file_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol_name": self.symbol_name,
            "chunk_type": self.chunk_type,
            "score": round(self.link_score + self.score, 6),
            "tokens": self.tokens,
            "signals": list(self.signals),
        }


@dataclass
class Candidate:
    score: float = 0.0  # fused rank score of the fill signals, summed over functions
    link_score: float = 0.0  # best link confidence, plus a little per other function
    signals: set[str] = field(default_factory=set)
    found_for: int = 0


@dataclass
class FunctionScores:
    """What the signals found for one changed function."""

    fused: dict[int, float] = field(default_factory=dict)  # fill signals, fused
    links: dict[int, float] = field(default_factory=dict)  # structural: link scores
    signals: dict[int, set[str]] = field(default_factory=dict)

    def weighted(self, weight: float) -> FunctionScores:
        """These scores, each multiplied by ``weight``."""
        if weight == 1.0:
            return self
        return FunctionScores(
            {k: v * weight for k, v in self.fused.items()},
            {k: v * weight for k, v in self.links.items()},
            self.signals,
        )


#: Each further changed function that links to a chunk adds this to its link score.
LINK_SHARED_BONUS = 0.1


def merge_function_scores(per_function: Iterable[FunctionScores]) -> dict[int, Candidate]:
    """One candidate per chunk over all changed functions: fused scores add up; the link
    score is the best one, plus ``LINK_SHARED_BONUS`` for each other function linked to it."""
    merged: dict[int, Candidate] = {}
    for found in per_function:
        for chunk_id in found.fused.keys() | found.links.keys():
            candidate = merged.setdefault(chunk_id, Candidate())
            candidate.score += found.fused.get(chunk_id, 0.0)
            link = found.links.get(chunk_id, 0.0)
            if link:
                shared = LINK_SHARED_BONUS if candidate.link_score else 0.0
                candidate.link_score = max(candidate.link_score, link) + shared
            candidate.signals |= found.signals.get(chunk_id, set())
            candidate.found_for += 1
    return merged


def rank_key(chunk: ContextChunk) -> tuple[object, ...]:
    """Code before tests, docs and config; within each, linked chunks by link score before
    the fill signals' results by fused score. Ties break on path and line: stable order."""
    return (
        chunk.secondary,
        chunk.link_score <= 0,
        -chunk.link_score,
        -chunk.score,
        -chunk.found_for,
        chunk.file_path,
        chunk.start_line,
    )


def rank_context(chunks: Iterable[ContextChunk], max_per_file: int) -> list[ContextChunk]:
    """Best first (``rank_key``); drop chunks overlapping a better one in the same file;
    at most ``max_per_file`` unlinked chunks per file (linked ones are never capped)."""
    ordered = sorted(chunks, key=rank_key)
    kept: list[ContextChunk] = []
    per_file: dict[str, int] = {}
    for chunk in ordered:
        if chunk.link_score <= 0 and per_file.get(chunk.file_path, 0) >= max_per_file:
            continue
        if any(_overlap(k, chunk) for k in kept):
            continue
        kept.append(chunk)
        per_file[chunk.file_path] = per_file.get(chunk.file_path, 0) + 1
    return kept


def _overlap(a: ContextChunk, b: ContextChunk) -> bool:
    """Same lines of one file. A class chunk carries its header and member signatures, not
    the members' bodies, so it does not overlap its methods."""
    if a.file_path != b.file_path or (a.chunk_type == "class") != (b.chunk_type == "class"):
        return False
    return a.start_line <= b.end_line and b.start_line <= a.end_line


def render_context_block(chunk: ContextChunk) -> str:
    """How a chunk appears in the review prompt."""
    fence = fence_for(chunk.code)
    name = chunk.qualified_name or chunk.symbol_name or ""
    summary = f"\n{chunk.summary}" if chunk.summary else ""
    return (
        f"### {chunk.file_path}:{chunk.start_line}-{chunk.end_line} {name} ({chunk.chunk_type})"
        f"{summary}\n{fence}{chunk.language or ''}\n{chunk.code}\n{fence}"
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
