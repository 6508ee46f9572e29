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
import time
from collections.abc import Generator, Iterable, Iterator, Sized
from contextlib import closing, contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path

from sqlalchemy import Engine

from app.db.queries import release_session_lock, take_session_lock
from app.db.queries.chunks import analyze_if_changed, count_chunks, last_chunk_id
from app.db.queries.index_runs import record_index_run
from app.db.queries.repositories import (
    find_repository,
    mark_indexed,
    repository_id,
    set_enrich_pending,
)
from app.db.queries.usage import record_usage
from app.db.vector_calibration import calibrate_if_needed, decline_by_trial
from app.db.vector_index import build_lock, rebuild_if_needed
from app.db.vector_policy import DEFAULT_POLICY, VectorIndexPolicy
from app.db.word_counts import refresh_word_counts
from app.errors import ConfigError, ReviewbotError
from app.indexing import store
from app.indexing.batches import BatchWriter, FileWork
from app.indexing.embedder import Embedder
from app.indexing.enrichment import Enrichment
from app.indexing.links import LINK_VERSION
from app.indexing.parallel import ChunkJob, chunk_in_order
from app.indexing.report import IndexBusy, IndexOptions, IndexReport, NoProgress, Progress
from app.indexing.source_tree import DirectorySource, FileSource, TreeFile
from app.indexing.stale import enrichment_progress, is_pending
from app.indexing.summarizer import (
    HEURISTIC,
    LLMSummarizer,
)
from app.llm.tokens import token_counter


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
        self.enrichment = Enrichment(
            engine,
            repo,
            embedder,
            summarizer,
            self.report,
            self.progress,
            estimate=self.options.estimate,
            timed=self._timed,
            count_tokens=self._count_tokens,
            defer=not self.options.enrich,
            embed_slice=self.options.embed_slice,
        )

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
                    find_repository(conn, self.repo)
                    if self.options.estimate
                    else repository_id(conn, self.repo)
                )
                known = store.known_files(conn, self._repo_id) if self._repo_id else {}
                last_id_before = last_chunk_id(conn)
            with self._timed("walk"):
                tree = self.source.files(config)
            with closing(tree) if isinstance(tree, Generator) else nullcontext():
                self._index_files(tree, known, config.max_file_bytes)
            if self._enrich_inline():
                with self.engine.connect() as conn:
                    last_id_before = last_chunk_id(conn)
            self.enrichment.upgrade_stale(self._repo_id, int(last_id_before))
            if not self.options.estimate:
                self._finish()

    def _enrich_inline(self) -> bool:
        """With enrichment deferred, whether to make it now after all: when the
        repository has at most ``inline_enrich_max`` rows without it."""
        options, repo_id = self.options, self._repo_id
        if options.enrich or options.estimate or repo_id is None or not options.inline_enrich_max:
            return False
        with self.engine.connect() as conn:
            done, total = enrichment_progress(
                conn,
                repo_id,
                summary_model=self.summarizer.model if self.summarizer else None,
                embedding_model=self.embedder.model,
            )
        if total - done > options.inline_enrich_max:
            return False
        self.enrichment.defer = False
        self.report.summaries_deferred = self.report.embeddings_deferred = 0
        return True

    def _index_files(
        self, tree: Iterable[TreeFile], known: dict[str, store.KnownFile], max_bytes: int
    ) -> None:
        report = self.report
        self.progress.start("files", len(tree) if isinstance(tree, Sized) else None)
        seen: set[str] = set()
        batch: list[FileWork] = []
        gone: list[str] = []
        touched: list[tuple[int, int]] = []
        changed = self._changed_files(tree, known, max_bytes, seen, gone, touched)
        with closing(chunk_in_order(changed, self.options.parallelism)) as results:
            while True:
                with self._timed("chunk"):  # a file's chunks (and the reading of the next)
                    found = next(results, None)
                if found is None:
                    break
                (tree_file, digest, previous), result = found
                if result.skipped:
                    report.files_skipped[result.skipped.split(" (")[0]] += 1
                    if previous is not None:
                        gone.append(tree_file.path)
                    continue
                report.files_changed += 1
                batch.append(
                    FileWork(
                        tree_file,
                        digest,
                        result.language,
                        result.decoded_leniently,
                        result.chunks,
                        result.links,
                    )
                )
                if len(batch) >= self.options.batch_files:
                    self._batches().apply(batch)
                    batch = []
        if batch:
            self._batches().apply(batch)
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

    def _changed_files(
        self,
        tree: Iterable[TreeFile],
        known: dict[str, store.KnownFile],
        max_bytes: int,
        seen: set[str],
        gone: list[str],
        touched: list[tuple[int, int]],
    ) -> Iterator[tuple[tuple[TreeFile, str, store.KnownFile | None], ChunkJob]]:
        """The files of ``tree`` to chunk, read and hashed; the others are counted (and
        noted in ``seen``, ``gone`` and ``touched``) as they go by."""
        report = self.report
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
            job = ChunkJob(tree_file.path, data, self.options.limits, max_bytes)
            yield (tree_file, digest, previous), job

    def _finish(self) -> None:
        r, repo_id = self.report, self._require_repo()
        with self._timed("db_write"), self.engine.begin() as conn:
            r.commit = self.source.commit()
            mark_indexed(conn, repo_id, r.commit)
            r.chunks_total = count_chunks(conn, repo_id)
            refresh_word_counts(conn, repo_id, r.chunks_total, policy=self.options.word_counts)
            deferred = max(r.summaries_deferred, r.embeddings_deferred)
            if is_pending(r.chunks_total - deferred, r.chunks_total):
                set_enrich_pending(conn, repo_id, True)
        with self._timed("vector_index"):  # statistics, the index's build and calibration
            changed = r.chunks_added + r.chunks_updated + r.chunks_deleted
            r.ivfflat_lists = upkeep_vector_index(
                self.engine, repo_id, changed, self.options.vector_policy
            )

    def _record_run(self) -> None:
        r, repo_id = self.report, self._require_repo()
        used = r.summary_usage
        summaries = (used.calls, used.prompt_tokens, used.completion_tokens)
        vectors = (r.embedding_usage.calls, r.embedding_usage.tokens)
        with self.engine.begin() as conn:
            record_index_run(
                conn,
                repo_id,
                failed=bool(r.errors),
                full=r.full,
                commit=r.commit,
                summary_model=r.summary_model,
                embedding_model=r.embedding_model,
                stats=r.as_json(),
                summary_usage=summaries,
                embedding_usage=vectors,
                wall_seconds=r.wall_seconds,
                error="; ".join(r.errors) or None,
            )
            record_usage(conn, repo_id, "summary", r.summary_model, *summaries)
            record_usage(conn, repo_id, "embedding", r.embedding_model, *vectors)

    def _batches(self) -> BatchWriter:
        return BatchWriter(
            self.engine,
            self._repo_id,
            self.report,
            self.progress,
            self.enrichment,
            estimate=self.options.estimate,
            embedding_model=self.embedder.model,
            timed=self._timed,
            count_tokens=self._count_tokens,
        )

    def _require_repo(self) -> int:
        assert self._repo_id is not None
        return self._repo_id

    @contextmanager
    def _repository_lock(self) -> Iterator[None]:
        with self.engine.connect() as conn:
            key = f"reviewbot:index:{self.repo}"
            got = take_session_lock(conn, key, self.options.lock_wait_seconds)
            if not got:
                raise IndexBusy(
                    f"another indexing run for {self.repo} is in progress; try again later"
                )
            try:
                yield
            finally:
                release_session_lock(conn, key)

    @contextmanager
    def _timed(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.report.timings[stage] += time.perf_counter() - start


def upkeep_vector_index(
    engine: Engine,
    repo_id: int,
    changed_rows: int,
    policy: VectorIndexPolicy = DEFAULT_POLICY,
) -> int | None:
    """Statistics and the vector index rule after rows changed (an index run, the
    background enrichment); returns the index's lists, None when there is none. Outside
    any transaction: a build that takes minutes must not hold up other repositories. If it
    fails, the next run (even a no-op) retries it."""
    with engine.begin() as conn:
        decline_by_trial(conn, repo_id, policy)  # before a large build, on a sample
    lists = _vector_index(engine, repo_id, policy, changed_rows)
    if lists is not None:
        with engine.begin() as conn:
            calibrate_if_needed(conn, repo_id, policy)
        lists = _vector_index(engine, repo_id, policy)  # drops the index calibration declined
    return lists


def _vector_index(
    engine: Engine, repo_id: int, policy: VectorIndexPolicy, changed_rows: int = 0
) -> int | None:
    with engine.connect() as conn:
        autocommit = conn.execution_options(isolation_level="AUTOCOMMIT")
        with build_lock(autocommit):
            analyze_if_changed(autocommit, changed_rows)
            return rebuild_if_needed(autocommit, repo_id, concurrently=True, policy=policy)
