"""Stored chunks whose summary or vector is not from the configured models (heuristic
summaries after an LLM outage, a changed embedding model, vectors missing after an
embedding failure), and their upgrade."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pgvector import Vector
from sqlalchemy import Connection, text

from app.config import Settings
from app.indexing.chunks import Chunk

#: A repository is *pending* (retrieval leaves the vector signal out) while more than this
#: share of its chunks lacks the configured models' summary or vector: after a first index
#: made without model calls, not for the few rows of a push the job has yet to reach.
PENDING_SHARE = 0.01


def is_pending(done: int, total: int) -> bool:
    return total - done > PENDING_SHARE * total


@dataclass(frozen=True)
class StaleChunk:
    id: int
    chunk: Chunk
    nl_summary: str | None
    summarizer: str | None
    summary_model: str | None
    embedding_model: str | None
    has_embedding: bool


def stale_chunks(
    conn: Connection,
    repo_id: int,
    *,
    summary_model: str | None,
    embedding_model: str,
    limit: int = 1000,
    after_id: int = 0,
) -> list[StaleChunk]:
    """Rows whose summary is not from ``summary_model`` (None: any summary will do) or
    whose vector is missing or from another model; ``after_id`` pages through them."""
    rows = conn.execute(
        text(
            "SELECT id, file_path, language, chunk_type, symbol_name, qualified_name, start_line,"
            ' end_line, raw_code, signature, docstring, "references", content_hash, nl_summary,'
            " summarizer, summary_model, embedding_model, embedding IS NOT NULL AS has_embedding"
            " FROM code_chunks WHERE repository_id = :r AND id > :after AND"
            f" {_stale(summary_model)} ORDER BY id LIMIT :lim"
        ),
        {"r": repo_id, "sm": summary_model, "em": embedding_model, "after": after_id, "lim": limit},
    )
    return [
        StaleChunk(
            id=r.id,
            chunk=Chunk(
                file_path=r.file_path,
                language=r.language,
                chunk_type=r.chunk_type,
                symbol_name=r.symbol_name,
                qualified_name=r.qualified_name,
                start_line=r.start_line,
                end_line=r.end_line,
                raw_code=r.raw_code,
                segments=((r.start_line, r.end_line),),
                signature=r.signature,
                docstring=r.docstring,
                references=tuple(r.references or ()),
                content_hash=r.content_hash,
            ),
            nl_summary=r.nl_summary,
            summarizer=r.summarizer,
            summary_model=r.summary_model,
            embedding_model=r.embedding_model,
            has_embedding=r.has_embedding,
        )
        for r in rows
    ]


def enrichment_progress(
    conn: Connection, repo_id: int, *, summary_model: str | None, embedding_model: str
) -> tuple[int, int]:
    """(chunks whose summary and vector are from the configured models, all chunks)."""
    stale, total = conn.execute(
        text(
            f"SELECT count(*) FILTER (WHERE {_stale(summary_model)}), count(*)"
            " FROM code_chunks WHERE repository_id = :r"
        ),
        {"r": repo_id, "sm": summary_model, "em": embedding_model},
    ).one()
    return int(total) - int(stale), int(total)


def configured_progress(
    conn: Connection, repo_id: int, settings: Settings, embedding_model: str
) -> tuple[int, int]:
    """``enrichment_progress`` against the models ``settings`` configure (no summary
    model: the heuristic summaries are what there is)."""
    summary_model = settings.summary_model if settings.model_configured("summary") else None
    return enrichment_progress(
        conn, repo_id, summary_model=summary_model, embedding_model=embedding_model
    )


def _stale(summary_model: str | None) -> str:
    """The condition of a row whose summary is not from ``summary_model`` (None: any
    will do) or whose vector is missing or from another model (``:sm``, ``:em``)."""
    summary = (
        "summarizer IS NULL"
        if summary_model is None
        else "(summarizer IS DISTINCT FROM 'llm' OR summary_model IS DISTINCT FROM :sm)"
    )
    return f"({summary} OR embedding IS NULL OR embedding_model IS DISTINCT FROM :em)"


def update_chunk_models(conn: Connection, updates: Sequence[dict[str, Any]]) -> None:
    """Set summaries and vectors: dicts of cid, summary, summarizer, model, embedding, emodel,
    search_text."""
    if updates:
        conn.execute(
            text(
                "UPDATE code_chunks SET nl_summary = :summary, summarizer = :summarizer,"
                " search_text = :search_text,"
                " summary_model = :model, embedding = CAST(:embedding AS halfvec),"
                " embedding_model = :emodel, updated_at = now() WHERE id = :cid"
            ),
            [
                {**u, "embedding": Vector(u["embedding"]).to_text() if u["embedding"] else None}
                for u in updates
            ],
        )
