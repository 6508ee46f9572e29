"""Ranking, de-duplication, diversity and token-budget packing of context chunks. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace


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

    def as_json(self) -> dict[str, object]:
        return {
            "file_path": self.file_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol_name": self.symbol_name,
            "chunk_type": self.chunk_type,
            "score": round(self.score, 6),
            "tokens": self.tokens,
            "signals": list(self.signals),
        }


@dataclass
class Candidate:
    score: float = 0.0
    signals: set[str] = field(default_factory=set)
    found_for: int = 0


def merge_function_scores(
    per_function: Iterable[Mapping[int, tuple[float, set[str]]]],
) -> dict[int, Candidate]:
    """Sum each chunk's fused score over changed functions; count how many found it."""
    merged: dict[int, Candidate] = {}
    for scores in per_function:
        for chunk_id, (score, signals) in scores.items():
            candidate = merged.setdefault(chunk_id, Candidate())
            candidate.score += score
            candidate.signals |= signals
            candidate.found_for += 1
    return merged


def rank_context(chunks: Iterable[ContextChunk], max_per_file: int) -> list[ContextChunk]:
    """Best first; drop chunks overlapping a better one in the same file; at most
    ``max_per_file`` chunks per file. Ties break on path and line, so order is stable."""
    ordered = sorted(chunks, key=lambda c: (-c.score, -c.found_for, c.file_path, c.start_line))
    kept: list[ContextChunk] = []
    per_file: dict[str, int] = {}
    for chunk in ordered:
        if per_file.get(chunk.file_path, 0) >= max_per_file:
            continue
        if any(
            k.file_path == chunk.file_path
            and k.start_line <= chunk.end_line
            and chunk.start_line <= k.end_line
            for k in kept
        ):
            continue
        kept.append(chunk)
        per_file[chunk.file_path] = per_file.get(chunk.file_path, 0) + 1
    return kept


def render_context_block(chunk: ContextChunk) -> str:
    """How a chunk appears in the review prompt."""
    fence = "`" * max(3, _longest_backticks(chunk.code) + 1)
    name = chunk.qualified_name or chunk.symbol_name or ""
    summary = f"\n{chunk.summary}" if chunk.summary else ""
    return (
        f"### {chunk.file_path}:{chunk.start_line}-{chunk.end_line} {name} ({chunk.chunk_type})"
        f"{summary}\n{fence}{chunk.language or ''}\n{chunk.code}\n{fence}"
    )


def _longest_backticks(text: str) -> int:
    run = best = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    return best


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
