"""How a retrieved chunk reads in a prompt: its place, its name, why it is there, and its
code (or excerpt) fenced as data. Retrieval packs by the cost of this block, so it is
passed to ``retrieve_context`` rather than known there. Pure."""

from __future__ import annotations

from app.llm.fences import fence_for
from app.retrieval.context_chunk import ContextChunk


def render_context_block(chunk: ContextChunk) -> str:
    """How a chunk appears in the review prompt (its excerpt, when it has one)."""
    code = chunk.excerpt or chunk.code
    fence = fence_for(code)
    name = chunk.qualified_name or chunk.symbol_name or ""
    kind = f"{chunk.chunk_type}, excerpt" if chunk.excerpt else chunk.chunk_type
    summary = f"\n{chunk.summary}" if chunk.summary else ""
    reasons = chunk.evidence.reasons()
    why = f"\nWhy: {'; '.join(reasons)}." if reasons else ""
    lines = ", ".join(f"{p.start_line}-{p.end_line}" for p in chunk.shown_parts(0))
    return (
        f"### {chunk.file_path}:{lines} {name} ({kind})"
        f"{why}{summary}\n{fence}{chunk.language or ''}\n{code}\n{fence}"
    )
