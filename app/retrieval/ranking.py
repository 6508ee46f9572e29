"""Ranking, de-duplication, diversity and token-budget packing of context chunks (each
costed as the prompt will render it: the renderer is the caller's). Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from app.db.chunk_types import ChunkType
from app.retrieval.context_chunk import ContextChunk


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
    if a.file_path != b.file_path or (a.chunk_type == ChunkType.CLASS) != (
        b.chunk_type == ChunkType.CLASS
    ):
        return False
    if (a.window_from or b.window_from) and _same_definition(a, b):
        return True
    a_from, b_from = a.window_from or a.start_line, b.window_from or b.start_line
    return a_from <= b.end_line and b_from <= a.end_line


def _same_definition(a: ContextChunk, b: ContextChunk) -> bool:
    return (
        a.chunk_type == b.chunk_type == ChunkType.WINDOW
        and a.qualified_name == b.qualified_name
        and a.start_line == b.start_line
    )


def pack(
    ranked: Iterable[ContextChunk], budget: int, cost_of: Callable[[ContextChunk], int]
) -> tuple[list[ContextChunk], int]:
    """Greedily take chunks in order while their costs (``cost_of``: the tokens of a chunk's
    block as the prompt renders it, and its separator) fit ``budget`` tokens.

    A chunk too big for what is left is skipped, and smaller ones after it may still fit.
    The total never exceeds the budget. Returns (packed chunks with token counts, used).
    """
    packed: list[ContextChunk] = []
    used = 0
    for chunk in ranked:
        cost = cost_of(chunk)
        if used + cost <= budget:
            packed.append(replace(chunk, tokens=cost))
            used += cost
    return packed, used
