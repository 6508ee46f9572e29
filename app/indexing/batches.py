"""Writing one batch of changed files: their chunks matched against the stored rows by
content hash (kept, moved, dropped or new), the new ones summarised and embedded, and
all of it written in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

from sqlalchemy import Engine

from app.indexing import store
from app.indexing.chunks import Chunk
from app.indexing.enrichment import Enrichment
from app.indexing.links import Link
from app.indexing.report import IndexReport, Progress
from app.indexing.source_tree import TreeFile
from app.indexing.summarizer import Summary


@dataclass
class FileWork:
    """A changed file, read and chunked, waiting for its batch."""

    tree_file: TreeFile
    content_hash: str
    language: str | None
    lenient: bool
    chunks: tuple[Chunk, ...]
    links: tuple[Link, ...]


class BatchWriter:
    """Applies batches of changed files to one repository's rows."""

    def __init__(
        self,
        engine: Engine,
        repo_id: int | None,
        report: IndexReport,
        progress: Progress,
        enrichment: Enrichment,
        *,
        estimate: bool,
        embedding_model: str,
        timed: Callable[[str], AbstractContextManager[None]],
        count_tokens: Callable[[str], int],
    ) -> None:
        self.engine, self.repo_id, self.report, self.progress = engine, repo_id, report, progress
        self.enrichment, self.estimate, self.embedding_model = enrichment, estimate, embedding_model
        self._timed, self._count_tokens = timed, count_tokens

    def apply(self, batch: list[FileWork]) -> None:
        """Match, summarise, embed and write one batch of changed files."""
        report = self.report
        stored: dict[str, list[store.StoredChunk]] = {}
        if self.repo_id is not None:
            with self._timed("db_read"), self.engine.connect() as conn:
                stored = store.stored_chunks(conn, self.repo_id, [w.tree_file.path for w in batch])
        plans = [
            (work, *match_chunks(work.chunks, stored.get(work.tree_file.path, [])))
            for work in batch
        ]
        fresh = [chunk for _, new, _, _ in plans for chunk in new]
        for _, new, moved, dropped in plans:
            report.chunks_added += len(new)
            report.chunks_updated += len(moved)
            report.chunks_deleted += len(dropped)
        report.chunks_reused += sum(len(work.chunks) - len(new) for work, new, _, _ in plans)
        self.progress.start("chunks", None)
        self.progress.advance("chunks", len(fresh))
        summaries = self.enrichment.summaries(fresh)
        vectors = self.enrichment.vectors(fresh, summaries)
        if self.estimate:
            return
        self._write(plans, summaries, vectors)

    def _write(
        self,
        plans: list[tuple[FileWork, list[Chunk], list[store.Move], list[int]]],
        summaries: Sequence[Summary],
        vectors: Sequence[list[float] | None],
    ) -> None:
        """Write one batch: its files, chunk moves and deletions, links and new chunks."""
        with self._timed("db_write"), self.engine.begin() as conn:
            repo_id = self.repo_id
            assert repo_id is not None  # an estimate writes nothing
            ids = store.upsert_files(
                conn,
                repo_id,
                [
                    store.FileRow(
                        work.tree_file.path,
                        work.content_hash,
                        work.language,
                        work.tree_file.size,
                        work.tree_file.mtime_ns,
                        work.lenient,
                    )
                    for work, _, _, _ in plans
                ],
            )
            store.delete_chunks(conn, [i for _, _, _, dropped in plans for i in dropped])
            store.move_chunks(conn, [m for _, _, moved, _ in plans for m in moved])
            store.replace_links(
                conn,
                repo_id,
                [(ids[w.tree_file.path], w.tree_file.path, w.links) for w, _, _, _ in plans],
            )
            rows: list[tuple[int, store.NewChunk]] = []
            offset = 0
            for work, new, _, _ in plans:
                file_id = ids[work.tree_file.path]
                rows += [
                    (
                        file_id,
                        store.NewChunk(
                            chunk,
                            summaries[offset + i].text,
                            summaries[offset + i].summarizer,
                            summaries[offset + i].model,
                            vectors[offset + i],
                            self.embedding_model,
                            self._count_tokens(chunk.raw_code),
                        ),
                    )
                    for i, chunk in enumerate(new)
                ]
                offset += len(new)
            store.copy_chunks(conn, repo_id, rows)

    # -- bookkeeping -------------------------------------------------------------------


def match_chunks(
    new: Sequence[Chunk], stored: Sequence[store.StoredChunk]
) -> tuple[list[Chunk], list[store.Move], list[int]]:
    """Pair a file's new chunks with its stored rows by content hash.

    Returns (chunks to insert, ``store.Move`` for kept rows whose lines moved (a skeleton's
    stretches too: its members' bodies may have grown), ids of rows to delete). A kept
    row whose lines did not move is not touched.
    """
    pool: dict[str, list[store.StoredChunk]] = {}
    for row in stored:
        pool.setdefault(row.content_hash, []).append(row)
    inserts: list[Chunk] = []
    moves: list[store.Move] = []
    for chunk in new:
        rows = pool.get(chunk.content_hash)
        if not rows:
            inserts.append(chunk)
            continue
        row = rows.pop(0)
        place = (chunk.start_line, chunk.end_line, store.flat_segments(chunk))
        if (row.start_line, row.end_line, row.segments) != place:
            moves.append((row.id, *place))
    deletes = [row.id for rows in pool.values() for row in rows]
    return inserts, moves, deletes
