"""Index a source tree into ``code_chunks``, incrementally.

A run walks the tree, skips files whose size and mtime (or else content hash) are
unchanged, chunks the rest, and for each changed file keeps the rows whose chunk content
is unchanged, deletes vanished ones and inserts new ones. Only new chunk contents are
summarised and embedded, and those come from the summary and embedding caches whenever
the same code was seen before (a renamed file costs nothing). A final pass upgrades rows
whose summary or vector is not from the configured models (heuristic summaries after an
LLM outage, a changed embedding model, vectors missing after an embedding failure).

Writes happen in one transaction per batch of files. One run per repository at a time
(a PostgreSQL advisory lock).
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections import Counter, defaultdict
from collections.abc import Generator, Iterable, Iterator, Sequence, Sized
from contextlib import closing, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import OperationalError

from app.db.queries.usage import record_usage
from app.db.vector_index import rebuild_if_needed
from app.errors import ConfigError, ReviewbotError
from app.indexing import store
from app.indexing.chunks import Chunk
from app.indexing.embedder import Embedder, EmbeddingError, EmbeddingUsage, embedding_text
from app.indexing.files import chunk_file
from app.indexing.links import LINK_VERSION, Link
from app.indexing.source_tree import DirectorySource, FileSource, TreeFile
from app.indexing.summarizer import (
    HEURISTIC,
    LLM,
    LLMSummarizer,
    Summary,
    SummaryUsage,
    heuristic_summary,
)
from app.indexing.windows import ChunkLimits
from app.llm.tokens import token_counter
from app.logs import kv

log = logging.getLogger(__name__)

#: Rough prompt overhead of one summary request and of one chunk in it (for --estimate).
PROMPT_OVERHEAD_TOKENS = 180
CHUNK_OVERHEAD_TOKENS = 25
ESTIMATED_SUMMARY_TOKENS = 60


class IndexBusy(ReviewbotError):
    """Another indexing run for this repository is in progress."""


class Progress(Protocol):
    def start(self, stage: str, total: int | None) -> None: ...
    def advance(self, stage: str, amount: int = 1) -> None: ...


class NoProgress:
    def start(self, stage: str, total: int | None) -> None:
        pass

    def advance(self, stage: str, amount: int = 1) -> None:
        pass


#: Texts per call of the embedder from one batch of files (it batches requests itself).
EMBED_SLICE = 512


@dataclass(frozen=True)
class IndexOptions:
    full: bool = False  # re-read every file, ignoring size and mtime
    estimate: bool = False  # plan only: no model calls, no writes
    limits: ChunkLimits = field(default_factory=ChunkLimits)
    batch_files: int = 200
    #: How long to wait for another run of the same repository to finish before raising
    #: ``IndexBusy`` (jobs wait; the CLI says so at once).
    lock_wait_seconds: float = 0.0


@dataclass
class IndexReport:
    """What a run did; ``as_json`` is the documented ``reviewbot index --json`` contract."""

    repo: str
    root: str
    full: bool = False
    estimate: bool = False
    commit: str | None = None
    files_seen: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    files_skipped: Counter[str] = field(default_factory=Counter)
    chunks_added: int = 0
    chunks_updated: int = 0
    chunks_deleted: int = 0
    chunks_reused: int = 0
    chunks_total: int = 0
    summary_model: str = HEURISTIC
    summaries_llm: int = 0
    summaries_heuristic: int = 0
    summaries_cached: int = 0
    summary_usage: SummaryUsage = field(default_factory=SummaryUsage)
    embedding_model: str = ""
    embeddings_computed: int = 0
    embeddings_cached: int = 0
    embeddings_missing: int = 0
    embedding_usage: EmbeddingUsage = field(default_factory=EmbeddingUsage)
    errors: list[str] = field(default_factory=list)
    ivfflat_lists: int | None = None
    wall_seconds: float = 0.0
    timings: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def as_json(self) -> dict[str, object]:
        return {
            "repo": self.repo,
            "root": self.root,
            "full": self.full,
            "estimate": self.estimate,
            "commit": self.commit,
            "files": {
                "seen": self.files_seen,
                "changed": self.files_changed,
                "unchanged": self.files_unchanged,
                "deleted": self.files_deleted,
                "skipped": dict(sorted(self.files_skipped.items())),
            },
            "chunks": {
                "added": self.chunks_added,
                "updated": self.chunks_updated,
                "deleted": self.chunks_deleted,
                "reused": self.chunks_reused,
                "total": self.chunks_total,
            },
            "summaries": {
                "model": self.summary_model,
                "llm": self.summaries_llm,
                "heuristic": self.summaries_heuristic,
                "cached": self.summaries_cached,
                "calls": self.summary_usage.calls,
                "prompt_tokens": self.summary_usage.prompt_tokens,
                "completion_tokens": self.summary_usage.completion_tokens,
                "failed_batches": self.summary_usage.failed_batches,
            },
            "embeddings": {
                "model": self.embedding_model,
                "computed": self.embeddings_computed,
                "cached": self.embeddings_cached,
                "missing": self.embeddings_missing,
                "calls": self.embedding_usage.calls,
                "tokens": self.embedding_usage.tokens,
            },
            "errors": self.errors,
            "ivfflat_lists": self.ivfflat_lists,
            "wall_seconds": round(self.wall_seconds, 3),
            "timings": {k: round(v, 3) for k, v in sorted(self.timings.items())},
        }


@dataclass
class _FileWork:
    tree_file: TreeFile
    content_hash: str
    language: str | None
    lenient: bool
    chunks: tuple[Chunk, ...]
    links: tuple[Link, ...]


class Indexer:
    """One indexing run of one repository (build it, call ``run`` once)."""

    def __init__(
        self,
        engine: Engine,
        repo: str,
        source: FileSource | Path,
        *,
        embedder: Embedder,
        summarizer: LLMSummarizer | None = None,
        options: IndexOptions | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.engine, self.repo = engine, repo
        self.source = DirectorySource(source) if isinstance(source, Path) else source
        self.embedder, self.summarizer = embedder, summarizer
        self.options = options or IndexOptions()
        self.progress = progress or NoProgress()
        self.report = IndexReport(
            repo=repo,
            root=self.source.label,
            full=self.options.full,
            estimate=self.options.estimate,
        )
        self.report.summary_model = summarizer.model if summarizer else HEURISTIC
        self.report.embedding_model = embedder.model
        self._count_tokens = token_counter().count
        self._repo_id: int | None = None

    # -- the run -----------------------------------------------------------------------

    def run(self) -> IndexReport:
        """Index the source. A run that fails part-way (an archive over its limits, a
        broken stream) is recorded as failed and raises: the files it already wrote are
        correct for the tree, nothing is deleted, and the commit is not marked indexed."""
        if isinstance(self.source, DirectorySource) and not self.source.root.is_dir():
            raise ConfigError(f"{self.source.root} is not a directory")
        started = time.perf_counter()
        try:
            self._run_locked()
        except ReviewbotError as exc:
            if self._repo_id is not None and not self.options.estimate:
                self.report.errors.append(str(exc))
                self.report.wall_seconds = time.perf_counter() - started
                self._record_run()
            raise
        self.report.wall_seconds = time.perf_counter() - started
        if not self.options.estimate:
            self._record_run()
        return self.report

    def _run_locked(self) -> None:
        config = self.source.config()
        with self._repository_lock():
            with self.engine.begin() as conn:
                self._repo_id = (
                    store.find_repository(conn, self.repo)
                    if self.options.estimate
                    else store.repository_id(conn, self.repo)
                )
                known = store.known_files(conn, self._repo_id) if self._repo_id else {}
                last_id_before = conn.execute(
                    text("SELECT coalesce(max(id), 0) FROM code_chunks")
                ).scalar_one()
            with self._timed("walk"):
                tree = self.source.files(config)
            with closing(tree) if isinstance(tree, Generator) else nullcontext():
                self._index_files(tree, known, config.max_file_bytes)
            self._upgrade_stale(int(last_id_before))
            if not self.options.estimate:
                self._finish()

    def _index_files(
        self, tree: Iterable[TreeFile], known: dict[str, store.KnownFile], max_bytes: int
    ) -> None:
        report = self.report
        self.progress.start("files", len(tree) if isinstance(tree, Sized) else None)
        seen: set[str] = set()
        batch: list[_FileWork] = []
        gone: list[str] = []
        touched: list[tuple[int, int]] = []
        for tree_file in tree:
            seen.add(tree_file.path)
            report.files_seen += 1
            self.progress.advance("files")
            if tree_file.skipped is not None:
                report.files_skipped[tree_file.skipped.split(" (")[0]] += 1
                if tree_file.path in known:
                    gone.append(tree_file.path)
                continue
            previous = known.get(tree_file.path)
            if previous is not None and previous.link_version < LINK_VERSION:
                previous = replace(previous, content_hash="", mtime_ns=None)  # links: re-read
            if (
                not self.options.full
                and previous is not None
                and previous.size == tree_file.size
                and previous.mtime_ns == tree_file.mtime_ns
            ):
                report.files_unchanged += 1
                continue
            with self._timed("read_hash"):
                data = tree_file.read()
                digest = hashlib.sha256(data).hexdigest()
            if not self.options.full and previous is not None and previous.content_hash == digest:
                report.files_unchanged += 1
                touched.append((previous.id, tree_file.mtime_ns))
                continue
            with self._timed("chunk"):
                result = chunk_file(tree_file.path, data, self.options.limits, max_bytes)
            if result.skipped:
                report.files_skipped[result.skipped.split(" (")[0]] += 1
                if previous is not None:
                    gone.append(tree_file.path)
                continue
            report.files_changed += 1
            batch.append(
                _FileWork(
                    tree_file,
                    digest,
                    result.language,
                    result.decoded_leniently,
                    result.chunks,
                    result.links,
                )
            )
            if len(batch) >= self.options.batch_files:
                self._apply(batch)
                batch = []
        if batch:
            self._apply(batch)
        removed = self.source.removed_paths()
        if removed is None:  # a whole tree: what it does not list is gone
            gone += [path for path in known if path not in seen]
        else:  # a partial tree names its deletions
            gone += [path for path in dict.fromkeys(removed) if path in known and path not in seen]
        report.files_deleted = len(gone)
        if not self.options.estimate:
            with self._timed("db_write"), self.engine.begin() as conn:
                store.delete_files(conn, self._require_repo(), gone)
                store.touch_files(conn, touched)

    def _apply(self, batch: list[_FileWork]) -> None:
        """Match, summarise, embed and write one batch of changed files."""
        report = self.report
        stored: dict[str, list[store.StoredChunk]] = {}
        if self._repo_id is not None:
            with self._timed("db_read"), self.engine.connect() as conn:
                stored = store.stored_chunks(conn, self._repo_id, [w.tree_file.path for w in batch])
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
        summaries = self._summaries(fresh)
        vectors = self._vectors(fresh, summaries)
        if self.options.estimate:
            return
        self._write(plans, summaries, vectors)

    def _write(
        self,
        plans: list[tuple[_FileWork, list[Chunk], list[tuple[int, int, int]], list[int]]],
        summaries: Sequence[Summary],
        vectors: Sequence[list[float] | None],
    ) -> None:
        """Write one batch: its files, chunk moves and deletions, links and new chunks."""
        with self._timed("db_write"), self.engine.begin() as conn:
            repo_id = self._require_repo()
            offset = 0
            for work, new, moved, dropped in plans:
                tf = work.tree_file
                file_id = store.upsert_file(
                    conn,
                    repo_id,
                    tf.path,
                    work.content_hash,
                    work.language,
                    tf.size,
                    tf.mtime_ns,
                    work.lenient,
                )
                store.delete_chunks(conn, dropped)
                store.move_chunks(conn, moved)
                store.replace_links(conn, repo_id, file_id, tf.path, work.links)
                rows = [
                    store.NewChunk(
                        chunk,
                        summaries[offset + i].text,
                        summaries[offset + i].summarizer,
                        summaries[offset + i].model,
                        vectors[offset + i],
                        self.embedder.model,
                        self._count_tokens(chunk.raw_code),
                    )
                    for i, chunk in enumerate(new)
                ]
                offset += len(new)
                store.copy_chunks(conn, repo_id, file_id, rows)

    def _upgrade_stale(self, last_id_before: int) -> None:
        """Give old rows the configured models' summaries and vectors."""
        if self._repo_id is None:
            return
        summary_model = self.summarizer.model if self.summarizer else None
        after = 0
        while True:
            with self.engine.connect() as conn:
                page = store.stale_chunks(
                    conn,
                    self._repo_id,
                    summary_model=summary_model,
                    embedding_model=self.embedder.model,
                    after_id=after,
                )
            page = [s for s in page if s.id <= last_id_before]
            if not page:
                return
            after = page[-1].id
            self._upgrade_page(page, summary_model)

    def _upgrade_page(self, page: list[store.StaleChunk], summary_model: str | None) -> None:
        needs_summary = [s for s in page if _summary_stale(s, summary_model)]
        fresh = self._summaries([s.chunk for s in needs_summary]) if needs_summary else []
        by_id = {s.id: summary for s, summary in zip(needs_summary, fresh, strict=True)}
        summaries = [
            by_id.get(s.id)
            or Summary(
                s.nl_summary or heuristic_summary(s.chunk),
                s.summarizer or HEURISTIC,
                s.summary_model or HEURISTIC,
            )
            for s in page
        ]
        changed = [
            (s, summary)
            for s, summary in zip(page, summaries, strict=True)
            if (s.id in by_id and summary.summarizer == LLM)
            or not s.has_embedding
            or s.embedding_model != self.embedder.model
        ]
        if not changed:
            return
        vectors = self._vectors([s.chunk for s, _ in changed], [summary for _, summary in changed])
        self.report.chunks_updated += len(changed)
        if self.options.estimate:
            return
        with self._timed("db_write"), self.engine.begin() as conn:
            store.update_chunk_models(
                conn,
                [
                    {
                        "cid": s.id,
                        "summary": summary.text,
                        "summarizer": summary.summarizer,
                        "model": summary.model,
                        "embedding": vector,
                        "emodel": self.embedder.model,
                        "search_text": store.search_text(s.chunk, summary.text),
                    }
                    for (s, summary), vector in zip(changed, vectors, strict=True)
                ],
            )

    # -- summaries and vectors -----------------------------------------------------------

    def _summaries(self, chunks: Sequence[Chunk]) -> list[Summary]:
        """A summary per chunk: cache, then LLM (each distinct content once), else heuristic."""
        if not chunks:
            return []
        report = self.report
        if self.summarizer is None:
            report.summaries_heuristic += len(chunks)
            return [Summary(heuristic_summary(c), HEURISTIC, HEURISTIC) for c in chunks]
        model = self.summarizer.model
        with self._timed("db_read"), self.engine.connect() as conn:
            cached = store.cached_summaries(conn, model, (c.content_hash for c in chunks))
        missing = list({c.content_hash: c for c in chunks if c.content_hash not in cached}.values())
        report.summaries_cached += len(chunks) - sum(
            1 for c in chunks if c.content_hash not in cached
        )
        made: dict[str, Summary] = {}
        if missing and self.options.estimate:
            self._estimate_summaries(missing)
        elif missing:
            self.progress.start("summaries", len(missing))
            with self._timed("summarize"):
                results, usage = self.summarizer.summarize(missing)
            self.progress.advance("summaries", len(missing))
            report.summary_usage.add(usage)
            if usage.last_error and usage.last_error not in report.errors:
                report.errors.append(f"summaries: {usage.last_error}; used heuristic summaries")
            made = {c.content_hash: s for c, s in zip(missing, results, strict=True)}
            with self._timed("db_write"), self.engine.begin() as conn:
                store.store_summaries(
                    conn, model, {h: s.text for h, s in made.items() if s.summarizer == LLM}
                )
        out: list[Summary] = []
        for chunk in chunks:
            if chunk.content_hash in cached:
                out.append(Summary(cached[chunk.content_hash], LLM, model))
            elif chunk.content_hash in made:
                out.append(made[chunk.content_hash])
            else:  # estimate mode
                out.append(Summary(heuristic_summary(chunk), HEURISTIC, HEURISTIC))
        report.summaries_llm += sum(
            1 for c in chunks if c.content_hash in made and made[c.content_hash].summarizer == LLM
        )
        report.summaries_heuristic += sum(
            1
            for c in chunks
            if c.content_hash in made and made[c.content_hash].summarizer == HEURISTIC
        )
        return out

    def _estimate_summaries(self, missing: Sequence[Chunk]) -> None:
        assert self.summarizer is not None
        usage = self.report.summary_usage
        usage.calls += math.ceil(len(missing) / self.summarizer.batch_size)
        usage.prompt_tokens += usage.calls * PROMPT_OVERHEAD_TOKENS + sum(
            self._count_tokens(c.raw_code) + CHUNK_OVERHEAD_TOKENS for c in missing
        )
        usage.completion_tokens += len(missing) * ESTIMATED_SUMMARY_TOKENS

    def _vectors(
        self, chunks: Sequence[Chunk], summaries: Sequence[Summary]
    ) -> list[list[float] | None]:
        """A vector per chunk: cache, then the embedder (each distinct text once)."""
        if not chunks:
            return []
        report = self.report
        keys = [
            store.embedding_key(c.content_hash, s.text)
            for c, s in zip(chunks, summaries, strict=True)
        ]
        cached: dict[str, list[float]] = {}
        if self.embedder.cacheable:
            with self._timed("db_read"), self.engine.connect() as conn:
                cached = store.cached_embeddings(conn, self.embedder.model, keys)
        todo: dict[str, str] = {}
        for key, chunk, summary in zip(keys, chunks, summaries, strict=True):
            if key not in cached and key not in todo:
                todo[key] = embedding_text(
                    chunk.file_path, chunk.qualified_name, chunk.signature, summary.text
                )
        report.embeddings_cached += sum(1 for k in keys if k in cached)
        made: dict[str, list[float]] = {}
        if todo and self.options.estimate:
            if self.embedder.cacheable:
                usage = self.report.embedding_usage
                usage.calls += math.ceil(len(todo) / 128)
                usage.tokens += sum(self._count_tokens(t) for t in todo.values())
        elif todo:
            self.progress.start("embeddings", len(todo))
            try:
                # in slices, so what was embedded before a failure (or the end of the job's
                # model budget) is kept
                pending = list(todo)
                for start in range(0, len(pending), EMBED_SLICE):
                    part = pending[start : start + EMBED_SLICE]
                    with self._timed("embed"):
                        vectors = self.embedder.embed(
                            [todo[k] for k in part], report.embedding_usage
                        )
                    made.update(zip(part, vectors, strict=True))
            except EmbeddingError as exc:
                if str(exc) not in report.errors:
                    report.errors.append(
                        f"embeddings: {exc}; rows kept without vectors, the next run retries"
                    )
                log.warning(kv("index.embed_failed", repo=self.repo, error=exc))
            report.embeddings_computed += len(made)
            self.progress.advance("embeddings", len(todo))
            if made and self.embedder.cacheable:
                with self._timed("db_write"), self.engine.begin() as conn:
                    store.store_embeddings(conn, self.embedder.model, made)
        out = [cached.get(k) or made.get(k) for k in keys]
        report.embeddings_missing += (
            sum(1 for v in out if v is None) if not self.options.estimate else 0
        )
        return out

    # -- bookkeeping -------------------------------------------------------------------

    def _finish(self) -> None:
        repo_id = self._require_repo()
        with self._timed("db_write"), self.engine.begin() as conn:
            self.report.ivfflat_lists = rebuild_if_needed(conn, repo_id)
            self.report.commit = self.source.commit()
            conn.execute(
                text(
                    "UPDATE repositories SET last_indexed_commit = :c, updated_at = now()"
                    " WHERE id = :r"
                ),
                {"c": self.report.commit, "r": repo_id},
            )
            self.report.chunks_total = conn.execute(
                text("SELECT count(*) FROM code_chunks WHERE repository_id = :r"), {"r": repo_id}
            ).scalar_one()

    def _record_run(self) -> None:
        r = self.report
        with self.engine.begin() as conn:
            conn.execute(
                text(
                    'INSERT INTO index_runs (repository_id, status, "full", commit_sha,'
                    " summary_model, embedding_model, stats, summary_calls, summary_prompt_tokens,"
                    " summary_completion_tokens, embedding_calls, embedding_tokens, wall_seconds,"
                    " error, finished_at) VALUES (:r, :st, :f, :c, :sm, :em, CAST(:stats AS jsonb),"
                    " :sc, :spt, :sct, :ec, :et, :w, :err, now())"
                ),
                {
                    "r": self._require_repo(),
                    "st": "failed" if r.errors else "succeeded",
                    "f": r.full,
                    "c": r.commit,
                    "sm": r.summary_model,
                    "em": r.embedding_model,
                    "stats": _json(r.as_json()),
                    "sc": r.summary_usage.calls,
                    "spt": r.summary_usage.prompt_tokens,
                    "sct": r.summary_usage.completion_tokens,
                    "ec": r.embedding_usage.calls,
                    "et": r.embedding_usage.tokens,
                    "w": r.wall_seconds,
                    "err": "; ".join(r.errors) or None,
                },
            )
            repo_id, summaries, vectors = self._require_repo(), r.summary_usage, r.embedding_usage
            record_usage(
                conn,
                repo_id,
                "summary",
                r.summary_model,
                summaries.calls,
                summaries.prompt_tokens,
                summaries.completion_tokens,
            )
            embedding = (r.embedding_model, vectors.calls, vectors.tokens)
            record_usage(conn, repo_id, "embedding", *embedding)

    def _require_repo(self) -> int:
        assert self._repo_id is not None
        return self._repo_id

    @contextmanager
    def _repository_lock(self) -> Iterator[None]:
        with self.engine.connect() as conn:
            key = f"reviewbot:index:{self.repo}"
            got = _advisory_lock(conn, key, self.options.lock_wait_seconds)
            if not got:
                raise IndexBusy(
                    f"another indexing run for {self.repo} is in progress; try again later"
                )
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(hashtext(:k))"), {"k": key})
                conn.commit()

    @contextmanager
    def _timed(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.report.timings[stage] += time.perf_counter() - start


def match_chunks(
    new: Sequence[Chunk], stored: Sequence[store.StoredChunk]
) -> tuple[list[Chunk], list[tuple[int, int, int]], list[int]]:
    """Pair a file's new chunks with its stored rows by content hash.

    Returns (chunks to insert, ``(row id, start, end)`` for kept rows whose lines moved,
    ids of rows to delete). A kept row whose lines did not move is not touched.
    """
    pool: dict[str, list[store.StoredChunk]] = {}
    for row in stored:
        pool.setdefault(row.content_hash, []).append(row)
    inserts: list[Chunk] = []
    moves: list[tuple[int, int, int]] = []
    for chunk in new:
        rows = pool.get(chunk.content_hash)
        if not rows:
            inserts.append(chunk)
            continue
        row = rows.pop(0)
        if (row.start_line, row.end_line) != (chunk.start_line, chunk.end_line):
            moves.append((row.id, chunk.start_line, chunk.end_line))
    deletes = [row.id for rows in pool.values() for row in rows]
    return inserts, moves, deletes


def _advisory_lock(conn: Connection, key: str, wait_seconds: float) -> bool:
    """Take the session advisory lock ``key``, waiting up to ``wait_seconds``."""
    if wait_seconds <= 0:
        got = conn.execute(text("SELECT pg_try_advisory_lock(hashtext(:k))"), {"k": key}).scalar()
        conn.commit()
        return bool(got)
    try:
        conn.execute(
            text("SELECT set_config('lock_timeout', :t, false)"),
            {"t": f"{int(wait_seconds * 1000)}ms"},
        )
        conn.execute(text("SELECT pg_advisory_lock(hashtext(:k))"), {"k": key})
        return True
    except OperationalError as exc:
        if getattr(exc.orig, "sqlstate", None) != "55P03":  # lock_not_available
            raise
        conn.rollback()
        return False
    finally:
        if conn.in_transaction():
            conn.commit()
        conn.execute(text("SELECT set_config('lock_timeout', '0', false)"))
        conn.commit()


def _summary_stale(row: store.StaleChunk, summary_model: str | None) -> bool:
    if summary_model is None:
        return row.summarizer is None
    return row.summarizer != LLM or row.summary_model != summary_model


def _json(value: object) -> str:
    import json

    return json.dumps(value, sort_keys=True)
