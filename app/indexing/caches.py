"""The summary and embedding caches: keyed by content and model, so the same code is
never summarised or embedded twice, in any repository."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from pgvector import Vector
from sqlalchemy import Connection, select, text

from app.db.models import EmbeddingCache, SummaryCache


def cached_summaries(conn: Connection, model: str, hashes: Iterable[str]) -> dict[str, str]:
    wanted = sorted(set(hashes))
    if not wanted:
        return {}
    rows = conn.execute(
        select(SummaryCache.content_hash, SummaryCache.summary).where(
            SummaryCache.model == model, SummaryCache.content_hash.in_(wanted)
        )
    )
    return {r.content_hash: r.summary for r in rows}


def store_summaries(conn: Connection, model: str, summaries: dict[str, str]) -> None:
    if summaries:
        conn.execute(
            text(
                "INSERT INTO summary_cache (content_hash, model, summarizer, summary)"
                " VALUES (:h, :m, 'llm', :s) ON CONFLICT DO NOTHING"
            ),
            [{"h": h, "m": model, "s": s} for h, s in summaries.items()],
        )


def embedding_key(content_hash: str, summary: str) -> str:
    """Cache key of a vector: the chunk's content hash and its summary, not its path, so a
    renamed file reuses its vectors (their header keeps the path they were made with)."""
    return hashlib.sha256(f"{content_hash}\0{summary}".encode()).hexdigest()


def cached_embeddings(conn: Connection, model: str, keys: Iterable[str]) -> dict[str, list[float]]:
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    rows = conn.execute(
        select(EmbeddingCache.text_hash, EmbeddingCache.embedding).where(
            EmbeddingCache.model == model, EmbeddingCache.text_hash.in_(wanted)
        )
    )
    return {r.text_hash: _as_list(r.embedding) for r in rows}


def store_embeddings(conn: Connection, model: str, vectors: dict[str, list[float]]) -> None:
    if vectors:
        conn.execute(
            text(
                "INSERT INTO embedding_cache (text_hash, model, embedding, dims)"
                " VALUES (:k, :m, CAST(:v AS vector), :d) ON CONFLICT DO NOTHING"
            ),
            [
                {"k": k, "m": model, "v": Vector(v).to_text(), "d": len(v)}
                for k, v in vectors.items()
            ],
        )


def _as_list(value: object) -> list[float]:
    if hasattr(value, "tolist"):
        return list(value.tolist())
    if hasattr(value, "to_list"):
        return list(value.to_list())
    return [float(x) for x in value]  # type: ignore[attr-defined]
