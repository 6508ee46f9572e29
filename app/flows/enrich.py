"""Summaries and vectors made after the index, in the background.

The App indexes a repository without model calls (``IndexOptions(enrich=False)``): its
chunks, links and full-text rows are stored at the speed of parsing, and it can be
reviewed at once, without the vector signal. This job then gives every row the
configured models' summary and vector, a page at a time, each page committed: a job
that is stopped (a restart, the model time budget of one job) keeps what it made, and the
next one starts where it ended. One job per repository at a time (an advisory lock).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from app.db.queries import release_session_lock, take_session_lock
from app.db.queries.chunks import count_chunks, last_chunk_id
from app.db.queries.repositories import find_repository, set_enrich_pending
from app.db.queries.usage import record_usage
from app.db.word_counts import refresh_word_counts
from app.indexing.embedder import select_embedder
from app.indexing.enrichment import Enrichment
from app.indexing.indexer import upkeep_vector_index
from app.indexing.report import IndexReport, NoProgress
from app.indexing.stale import enrichment_progress, is_pending
from app.indexing.summarizer import HEURISTIC, select_summarizer
from app.llm.tokens import token_counter
from app.logs import kv
from app.runtime import Runtime

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EnrichOutcome:
    updated: int  # rows given a summary or vector this run
    done: int  # rows whose summary and vector are the configured models'
    total: int
    stopped: str | None = None  # why the run stopped early (the model failed, its budget)
    busy: bool = False  # another job holds the repository's enrichment

    @property
    def finished(self) -> bool:
        return self.done >= self.total


def enrich_repository(run: Runtime, repo: str) -> EnrichOutcome:
    """Give ``repo``'s rows the configured models' summaries and vectors; then its
    full-text statistics and vector index follow, and its pending flag says whether rows
    are left."""
    with run.engine.connect() as conn:
        repo_id = find_repository(conn, repo)
    if repo_id is None:
        return EnrichOutcome(0, 0, 0)
    embedder, summarizer = select_embedder(run.settings), select_summarizer(run.settings)
    summary_model = summarizer.model if summarizer else None
    report = IndexReport(repo=repo, root="enrichment")
    report.summary_model = summary_model or HEURISTIC
    report.embedding_model = embedder.model

    @contextmanager
    def timed(stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            report.timings[stage] += time.perf_counter() - started

    with _enrichment_lock(run, repo) as held:
        if not held:
            return EnrichOutcome(0, 0, 0, busy=True)
        with run.engine.connect() as conn:
            newest = last_chunk_id(conn)
        enrichment = Enrichment(
            run.engine,
            repo,
            embedder,
            summarizer,
            report,
            NoProgress(),
            estimate=False,
            timed=timed,
            count_tokens=token_counter().count,
        )
        enrichment.upgrade_stale(repo_id, newest)
        with run.engine.begin() as conn:
            done, total = enrichment_progress(
                conn, repo_id, summary_model=summary_model, embedding_model=embedder.model
            )
            set_enrich_pending(conn, repo_id, is_pending(done, total))
            if report.chunks_updated and done >= total:  # the summaries are searched too
                refresh_word_counts(conn, repo_id, count_chunks(conn, repo_id), force=True)
            used = report.summary_usage
            record_usage(
                conn, repo_id, "summary", report.summary_model,
                used.calls, used.prompt_tokens, used.completion_tokens,
            )  # fmt: skip
            vectors = report.embedding_usage
            record_usage(conn, repo_id, "embedding", embedder.model, vectors.calls, vectors.tokens)
    if report.chunks_updated:
        upkeep_vector_index(run.engine, repo_id, report.chunks_updated)
    outcome = EnrichOutcome(report.chunks_updated, done, total, used.last_error)
    log.info(
        kv(
            "enrich.done" if outcome.finished else "enrich.partial",
            repo=repo,
            updated=outcome.updated,
            done=done,
            total=total,
            stopped=outcome.stopped,
        )
    )
    return outcome


@contextmanager
def _enrichment_lock(run: Runtime, repo: str) -> Iterator[bool]:
    with run.engine.connect() as conn:
        key = f"reviewbot:enrich:{repo}"
        held = take_session_lock(conn, key, 0)
        try:
            yield held
        finally:
            if held:
                release_session_lock(conn, key)
