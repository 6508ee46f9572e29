"""Reads and writes of the index tables. Callers own the transaction (one per batch)."""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pgvector import HalfVector
from pgvector.psycopg import register_vector
from sqlalchemy import Connection, bindparam, delete, func, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.db.models import CodeChunk, SourceFile
from app.indexing.chunks import Chunk
from app.indexing.identifiers import split_identifier
from app.indexing.links import LINK_VERSION, Link

CHUNK_COPY_COLUMNS = (
    "repository_id",
    "source_file_id",
    "file_path",
    "start_line",
    "end_line",
    "segments",
    "symbol_name",
    "qualified_name",
    "chunk_type",
    "language",
    "raw_code",
    "signature",
    "docstring",
    "references",
    "content_hash",
    "nl_summary",
    "summarizer",
    "summary_model",
    "embedding",
    "embedding_model",
    "token_count",
    "search_text",
)


@dataclass(frozen=True)
class KnownFile:
    id: int
    content_hash: str
    size: int
    mtime_ns: int | None
    link_version: int = LINK_VERSION


@dataclass(frozen=True)
class StoredChunk:
    """A ``code_chunks`` row, as far as the indexer needs it."""

    id: int
    file_path: str
    content_hash: str
    start_line: int
    end_line: int
    segments: list[int] | None = None  # ``flat_segments``


#: A kept row's new place: ``(row id, start line, end line, flat_segments)``.
Move = tuple[int, int, int, list[int] | None]


def flat_segments(chunk: Chunk) -> list[int] | None:
    """A chunk's stretches of lines as stored (``code_chunks.segments``): each one's first
    and last line, flat; None for a chunk of one stretch (its start and end lines)."""
    if len(chunk.segments) < 2:
        return None
    return [line for segment in chunk.segments for line in segment]


@dataclass(frozen=True)
class NewChunk:
    """A chunk ready to insert: the chunk, its summary and its vector."""

    chunk: Chunk
    summary: str
    summarizer: str
    summary_model: str
    embedding: list[float] | None
    embedding_model: str
    token_count: int


def known_files(conn: Connection, repo_id: int) -> dict[str, KnownFile]:
    rows = conn.execute(
        select(
            SourceFile.path,
            SourceFile.id,
            SourceFile.content_hash,
            SourceFile.size_bytes,
            SourceFile.mtime_ns,
            SourceFile.link_version,
        ).where(SourceFile.repository_id == repo_id)
    )
    return {
        r.path: KnownFile(r.id, r.content_hash, r.size_bytes, r.mtime_ns, r.link_version)
        for r in rows
    }


def stored_chunks(
    conn: Connection, repo_id: int, paths: Sequence[str]
) -> dict[str, list[StoredChunk]]:
    rows = conn.execute(
        select(
            CodeChunk.id,
            CodeChunk.file_path,
            CodeChunk.content_hash,
            CodeChunk.start_line,
            CodeChunk.end_line,
            CodeChunk.segments,
        )
        .where(CodeChunk.repository_id == repo_id, CodeChunk.file_path.in_(list(paths)))
        .order_by(CodeChunk.id)
    )
    found: dict[str, list[StoredChunk]] = {}
    for r in rows:
        found.setdefault(r.file_path, []).append(StoredChunk(*r))
    return found


@dataclass(frozen=True)
class FileRow:
    """A changed file's row in ``source_files``."""

    path: str
    content_hash: str
    language: str | None
    size: int
    mtime_ns: int
    lenient: bool


def upsert_files(conn: Connection, repo_id: int, files: Sequence[FileRow]) -> dict[str, int]:
    """Insert or update a batch of files in one statement; their ids by path."""
    if not files:
        return {}
    statement = pg_insert(SourceFile).values(
        [
            {
                "repository_id": repo_id,
                "path": f.path,
                "content_hash": f.content_hash,
                "language": f.language,
                "size_bytes": f.size,
                "mtime_ns": f.mtime_ns,
                "decoded_leniently": f.lenient,
                "link_version": LINK_VERSION,
            }
            for f in files
        ]
    )
    upsert = statement.on_conflict_do_update(
        index_elements=[SourceFile.repository_id, SourceFile.path],
        set_={
            "content_hash": statement.excluded.content_hash,
            "language": statement.excluded.language,
            "size_bytes": statement.excluded.size_bytes,
            "mtime_ns": statement.excluded.mtime_ns,
            "decoded_leniently": statement.excluded.decoded_leniently,
            "link_version": statement.excluded.link_version,
            "indexed_at": func.now(),
        },
    ).returning(SourceFile.path, SourceFile.id)
    return {path: int(file_id) for path, file_id in conn.execute(upsert)}


LINK_COPY_COLUMNS = (
    "repository_id",
    "source_file_id",
    "file_path",
    "line",
    "name",
    "match",
    "target",
    "qualifier",
    "confidence",
    "kind",
)


def replace_links(
    conn: Connection, repo_id: int, files: Sequence[tuple[int, str, Iterable[Link]]]
) -> None:
    """The links of a batch of files, ``(file id, path, links)``, all rewritten (one
    DELETE, one COPY): they depend on the whole file (its imports), so a change anywhere
    in it can change the links of chunks whose own code did not change."""
    if not files:
        return
    conn.execute(
        text("DELETE FROM chunk_links WHERE source_file_id = ANY(:f)"),
        {"f": [file_id for file_id, _, _ in files]},
    )
    dbapi = conn.connection.driver_connection
    assert dbapi is not None
    columns = ", ".join(f'"{c}"' for c in LINK_COPY_COLUMNS)
    with dbapi.cursor() as cur, cur.copy(f"COPY chunk_links ({columns}) FROM STDIN") as copy:
        for file_id, path, links in files:
            for k in links:
                copy.write_row(
                    (
                        repo_id,
                        file_id,
                        path,
                        k.line,
                        k.name,
                        k.match,
                        k.target,
                        k.qualifier,
                        k.confidence,
                        k.kind,
                    )
                )


def touch_files(conn: Connection, updates: Sequence[tuple[int, int]]) -> None:
    """Record new mtimes of files whose content did not change: ``(file id, mtime_ns)``."""
    if updates:
        conn.execute(
            update(SourceFile)
            .where(SourceFile.id == bindparam("fid"))
            .values(mtime_ns=bindparam("m")),
            [{"fid": fid, "m": m} for fid, m in updates],
        )


def delete_files(conn: Connection, repo_id: int, paths: Sequence[str]) -> None:
    """Remove files and (by cascade) their chunks."""
    if paths:
        conn.execute(
            delete(SourceFile).where(
                SourceFile.repository_id == repo_id, SourceFile.path.in_(list(paths))
            )
        )


def delete_chunks(conn: Connection, ids: Sequence[int]) -> None:
    if ids:
        conn.execute(delete(CodeChunk).where(CodeChunk.id.in_(list(ids))))


def move_chunks(conn: Connection, moves: Sequence[Move]) -> None:
    """New lines for unchanged chunks (``Move``)."""
    if moves:
        conn.execute(
            update(CodeChunk)
            .where(CodeChunk.id == bindparam("cid"))
            .values(
                start_line=bindparam("s"),
                end_line=bindparam("e"),
                segments=bindparam("g"),
                updated_at=text("now()"),
            ),
            [{"cid": i, "s": s, "e": e, "g": g} for i, s, e, g in moves],
        )


_VECTOR_REGISTERED: weakref.WeakSet[Any] = weakref.WeakSet()

#: Column types of ``CHUNK_COPY_COLUMNS`` for binary COPY.
CHUNK_COPY_TYPES = (
    "bigint",
    "bigint",
    "text",
    "int4",
    "int4",
    "int4[]",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text[]",
    "text",
    "text",
    "text",
    "text",
    "halfvec",
    "text",
    "int4",
    "text",
)


def copy_chunks(conn: Connection, repo_id: int, chunks: Iterable[tuple[int, NewChunk]]) -> int:
    """Insert chunks, ``(file id, chunk)``, with one binary COPY (vectors travel as
    float16, not text); returns how many."""
    dbapi = conn.connection.driver_connection
    assert dbapi is not None
    if dbapi not in _VECTOR_REGISTERED:  # once per pooled connection: one catalog query
        register_vector(dbapi)
        _VECTOR_REGISTERED.add(dbapi)
    count = 0
    columns = ", ".join(f'"{c}"' for c in CHUNK_COPY_COLUMNS)
    with (
        dbapi.cursor() as cur,
        cur.copy(f"COPY code_chunks ({columns}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.set_types(list(CHUNK_COPY_TYPES))
        for file_id, new in chunks:
            c = new.chunk
            vector = HalfVector(new.embedding) if new.embedding is not None else None
            copy.write_row(
                (
                    repo_id,
                    file_id,
                    c.file_path,
                    c.start_line,
                    c.end_line,
                    flat_segments(c),
                    c.symbol_name,
                    c.qualified_name,
                    c.chunk_type,
                    c.language,
                    _clean(c.raw_code),
                    c.signature,
                    c.docstring,
                    list(c.references),
                    c.content_hash,
                    new.summary,
                    new.summarizer,
                    new.summary_model,
                    vector,
                    new.embedding_model,
                    new.token_count,
                    search_text(c, new.summary),
                )
            )
            count += 1
    return count


def search_text(chunk: Chunk, summary: str | None) -> str:
    """What full-text search sees: names split into words, references, and the summary."""
    names = [chunk.symbol_name or "", chunk.qualified_name or "", *chunk.references]
    idents = {ident for name in names for ident in re.findall(r"\w+", name)}
    words = {w for ident in idents for w in split_identifier(ident)}
    return " ".join(sorted(idents | words)) + "\n" + (summary or "")


def _clean(value: str) -> str:
    """PostgreSQL text cannot hold NUL; lenient decoding can leave one in."""
    return value.replace("\x00", "\ufffd")
