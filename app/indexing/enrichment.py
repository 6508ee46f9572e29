"""Summaries and vectors for chunks: from the summary and embedding caches first, then
from the models (each distinct content once), and the upgrade of stored rows whose
summary or vector is not from the configured models."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from sqlalchemy import Engine

from app.indexing import caches, stale, store
from app.indexing.chunks import Chunk
from app.indexing.embedder import Embedder, EmbeddingError, embedding_text
from app.indexing.report import IndexOptions, IndexReport, Progress
from app.indexing.summarizer import HEURISTIC, LLM, LLMSummarizer, Summary, heuristic_summary
from app.logs import kv

log = logging.getLogger(__name__)

#: Rough prompt overhead of one summary request and of one chunk in it (for --estimate).
PROMPT_OVERHEAD_TOKENS = 180
CHUNK_OVERHEAD_TOKENS = 25
ESTIMATED_SUMMARY_TOKENS = 60


class Enrichment:
    """What one index run asks of the caches and the models; it counts into ``report``."""

    def __init__(
        self,
        engine: Engine,
        repo: str,
        embedder: Embedder,
        summarizer: LLMSummarizer | None,
        report: IndexReport,
        progress: Progress,
        *,
        estimate: bool,
        timed: Callable[[str], AbstractContextManager[None]],
        count_tokens: Callable[[str], int],
        defer: bool = False,
        embed_slice: int = IndexOptions.embed_slice,
    ) -> None:
        self.engine, self.repo = engine, repo
        self.embedder, self.summarizer = embedder, summarizer
        self.report, self.progress, self.estimate = report, progress, estimate
        self._timed, self._count_tokens = timed, count_tokens
        #: no model calls: what the caches do not have is left for the background job
        self.defer = defer
        self.embed_slice = embed_slice

    def summaries(self, chunks: Sequence[Chunk]) -> list[Summary]:
        """A summary per chunk: cache, then LLM (each distinct content once), else heuristic."""
        if not chunks:
            return []
        report = self.report
        if self.summarizer is None:
            report.summaries_heuristic += len(chunks)
            return [Summary(heuristic_summary(c), HEURISTIC, HEURISTIC) for c in chunks]
        model = self.summarizer.model
        with self._timed("db_read"), self.engine.connect() as conn:
            cached = caches.cached_summaries(conn, model, (c.content_hash for c in chunks))
        missing = list({c.content_hash: c for c in chunks if c.content_hash not in cached}.values())
        report.summaries_cached += len(chunks) - sum(
            1 for c in chunks if c.content_hash not in cached
        )
        made: dict[str, Summary] = {}
        if missing and self.estimate:
            self._estimate_summaries(missing)
        elif missing and self.defer:
            report.summaries_deferred += sum(1 for c in chunks if c.content_hash not in cached)
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
                caches.store_summaries(
                    conn, model, {h: s.text for h, s in made.items() if s.summarizer == LLM}
                )
        out: list[Summary] = []
        for chunk in chunks:
            if chunk.content_hash in cached:
                out.append(Summary(cached[chunk.content_hash], LLM, model))
            elif chunk.content_hash in made:
                out.append(made[chunk.content_hash])
            else:  # estimate mode, or left for later
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

    def vectors(
        self, chunks: Sequence[Chunk], summaries: Sequence[Summary]
    ) -> list[list[float] | None]:
        """A vector per chunk: cache, then the embedder (each distinct text once)."""
        if not chunks:
            return []
        report = self.report
        keys = [
            caches.embedding_key(c.content_hash, s.text)
            for c, s in zip(chunks, summaries, strict=True)
        ]
        cached: dict[str, list[float]] = {}
        if self.embedder.cacheable:
            with self._timed("db_read"), self.engine.connect() as conn:
                cached = caches.cached_embeddings(conn, self.embedder.model, keys)
        todo: dict[str, str] = {}
        for key, chunk, summary in zip(keys, chunks, summaries, strict=True):
            if key not in cached and key not in todo:
                todo[key] = embedding_text(
                    chunk.file_path, chunk.qualified_name, chunk.signature, summary.text
                )
        report.embeddings_cached += sum(1 for k in keys if k in cached)
        made: dict[str, list[float]] = {}
        if todo and self.estimate:
            if self.embedder.cacheable:
                usage = self.report.embedding_usage
                usage.calls += math.ceil(len(todo) / 128)
                usage.tokens += sum(self._count_tokens(t) for t in todo.values())
        elif todo and self.defer:
            report.embeddings_deferred += sum(1 for k in keys if k in todo)
        elif todo:
            self.progress.start("embeddings", len(todo))
            try:
                # in slices, so what was embedded before a failure (or the end of the job's
                # model budget) is kept
                pending = list(todo)
                for start in range(0, len(pending), self.embed_slice):
                    part = pending[start : start + self.embed_slice]
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
                    caches.store_embeddings(conn, self.embedder.model, made)
        out = [cached.get(k) or made.get(k) for k in keys]
        if not self.estimate and not self.defer:
            report.embeddings_missing += sum(1 for v in out if v is None)
        return out

    def upgrade_stale(self, repo_id: int | None, last_id_before: int) -> None:
        """Give old rows the configured models' summaries and vectors, a page at a time
        (each page is written before the next is asked for, so a run that stops keeps what
        it made). Stops when the summary model fails or the job's model time runs out:
        the rest would only get heuristic summaries, and vectors made from them."""
        if repo_id is None or self.defer:
            return
        summary_model = self.summarizer.model if self.summarizer else None
        after = 0
        while True:
            with self.engine.connect() as conn:
                page = stale.stale_chunks(
                    conn,
                    repo_id,
                    summary_model=summary_model,
                    embedding_model=self.embedder.model,
                    after_id=after,
                )
            page = [s for s in page if s.id <= last_id_before]
            if not page:
                return
            after = page[-1].id
            self._upgrade_page(page, summary_model)
            if self.report.summary_usage.last_error and not self.estimate:
                return

    def _upgrade_page(self, page: list[stale.StaleChunk], summary_model: str | None) -> None:
        needs_summary = [s for s in page if _summary_stale(s, summary_model)]
        fresh = self.summaries([s.chunk for s in needs_summary]) if needs_summary else []
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
        vectors = self.vectors([s.chunk for s, _ in changed], [summary for _, summary in changed])
        self.report.chunks_updated += len(changed)
        if self.estimate:
            return
        with self._timed("db_write"), self.engine.begin() as conn:
            stale.update_chunk_models(
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


def _summary_stale(row: stale.StaleChunk, summary_model: str | None) -> bool:
    if summary_model is None:
        return row.summarizer is None
    return row.summarizer != LLM or row.summary_model != summary_model
