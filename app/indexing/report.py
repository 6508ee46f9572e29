"""What an index run is asked to do (``IndexOptions``), how it shows progress, and what
it did (``IndexReport``: the ``reviewbot index --json`` contract)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Protocol

from app.db.vector_policy import DEFAULT_POLICY, VectorIndexPolicy
from app.db.word_counts import DEFAULT_WORD_COUNTS, WordCountPolicy
from app.errors import ReviewbotError
from app.indexing.embedder import EmbeddingUsage
from app.indexing.parallel import Parallelism
from app.indexing.summarizer import HEURISTIC, SummaryUsage
from app.indexing.windows import ChunkLimits


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


@dataclass(frozen=True)
class IndexOptions:
    full: bool = False  # re-read every file, ignoring size and mtime
    estimate: bool = False  # plan only: no model calls, no writes
    limits: ChunkLimits = field(default_factory=ChunkLimits)
    batch_files: int = 200
    #: Processes that chunk files while the run writes, for a large run
    #: (``app/indexing/parallel.py``; by default one per core beyond two).
    parallelism: Parallelism = field(default_factory=Parallelism.for_this_machine)
    #: How long to wait for another run of the same repository to finish before raising
    #: ``IndexBusy`` (jobs wait; the CLI says so at once).
    lock_wait_seconds: float = 0.0
    #: False: no model calls in the run. New chunks get their summaries and vectors from
    #: the caches or not at all (a heuristic summary, no vector), and stored rows are not
    #: upgraded; a background job does both (``app/flows/enrich.py``). The App indexes
    #: so, to be reviewable as soon as chunks, links and full-text rows are stored.
    enrich: bool = True
    #: With ``enrich`` False, the run still makes them when the repository has at most
    #: this many rows without them (a push, a small repository).
    inline_enrich_max: int = 0
    #: Texts per call of the embedder from one batch of files (``Enrichment``; it batches
    #: requests itself): what a failure or the end of the model budget leaves embedded is
    #: kept a slice at a time.
    embed_slice: int = 512
    #: Which repositories' words are counted for full-text search, and which words stored.
    word_counts: WordCountPolicy = DEFAULT_WORD_COUNTS
    #: When a repository gets an ivfflat index, and how it is calibrated.
    vector_policy: VectorIndexPolicy = DEFAULT_POLICY


@dataclass
class HistoryReport:
    """What a history mine did (``app/indexing/history.py``)."""

    commits: int = 0  # commits read from git this run
    stored: int = 0  # change sets recorded (commits with source changes)
    skipped_sweeps: int = 0
    restarted: bool = False  # the old history was not an ancestor: mined from scratch
    head: str | None = None
    seconds: float = 0.0

    def as_json(self) -> dict[str, object]:
        return {
            "commits": self.commits,
            "stored": self.stored,
            "skipped_sweeps": self.skipped_sweeps,
            "restarted": self.restarted,
            "head": self.head,
            "seconds": round(self.seconds, 3),
        }


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
    summaries_deferred: int = 0  # left for the background job (IndexOptions.enrich)
    summary_usage: SummaryUsage = field(default_factory=SummaryUsage)
    embedding_model: str = ""
    embeddings_computed: int = 0
    embeddings_cached: int = 0
    embeddings_missing: int = 0
    embeddings_deferred: int = 0
    embedding_usage: EmbeddingUsage = field(default_factory=EmbeddingUsage)
    errors: list[str] = field(default_factory=list)
    ivfflat_lists: int | None = None
    wall_seconds: float = 0.0
    timings: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    history: HistoryReport | None = None  # the history mined after the run, if any

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
                "deferred": self.summaries_deferred,
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
                "deferred": self.embeddings_deferred,
                "calls": self.embedding_usage.calls,
                "tokens": self.embedding_usage.tokens,
            },
            "history": self.history.as_json() if self.history else None,
            "errors": self.errors,
            "ivfflat_lists": self.ivfflat_lists,
            "wall_seconds": round(self.wall_seconds, 3),
            "timings": {k: round(v, 3) for k, v in sorted(self.timings.items())},
        }
