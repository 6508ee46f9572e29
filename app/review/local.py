"""Review a local git repository: index the base, diff, retrieve, prompt (the CLI's job)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from app.config import Settings
from app.db.queries.index_runs import indexed_from
from app.diff.parse import parse_diff
from app.git import LocalRepo
from app.indexing.archive import GitArchiveSource, archive_limits
from app.indexing.embedder import Embedder
from app.indexing.history import HistoryLimits, mine_history
from app.indexing.indexer import Indexer, IndexReport, Progress
from app.indexing.source_tree import CONFIG_FILE
from app.indexing.summarizer import LLMSummarizer
from app.review.config import ReviewConfig, parse_review_config
from app.review.pipeline import PreparedReview, prepare_review


@dataclass(frozen=True)
class LocalReview:
    repo: str
    base: str
    head: str | None  # None: the working tree
    index: IndexReport
    prepared: PreparedReview
    git: LocalRepo
    replaced: str | None = None  # another tree the index of this name held before


def review_local(
    engine: Engine,
    path: Path,
    settings: Settings,
    *,
    embedder: Embedder,
    summarizer: LLMSummarizer | None,
    base: str | None = None,
    head: str | None = None,
    name: str | None = None,
    progress: Progress | None = None,
) -> LocalReview:
    """Index ``path`` at ``base`` (incrementally, streamed from ``git archive``: nothing is
    unpacked), then prepare the review of base..head."""
    repo = LocalRepo(path.resolve())
    repo.check()
    name = name or repo.root.name
    with engine.connect() as conn:
        before = indexed_from(conn, name)
    replaced = before if before is not None and before != str(repo.root) else None
    head_sha = repo.resolve(head) if head else None
    base_sha = repo.resolve(base) if base else repo.default_base(head_sha)
    config_bytes = repo.read(base_sha, CONFIG_FILE)
    # the rules come from the base, like the App's from the default branch: a change does
    # not set the rules of its own review
    config = (
        parse_review_config(
            config_bytes.decode("utf-8", "replace"), f"{base_sha[:12]}:{CONFIG_FILE}"
        )
        if config_bytes is not None
        else ReviewConfig()
    )
    source = GitArchiveSource(str(repo.root), base_sha, config_bytes, archive_limits(settings))
    report = Indexer(
        engine, name, source, embedder=embedder, summarizer=summarizer, progress=progress
    ).run()
    if settings.history_days > 0:
        limits = HistoryLimits(max_commits=settings.history_max_commits)
        report.history = mine_history(engine, name, repo, base_sha, limits)
    diffs = parse_diff(repo.diff(base_sha, head_sha))
    title, body = repo.messages(base_sha, head_sha)

    def read(file_path: str, side: str) -> bytes | None:
        return repo.read(base_sha if side == "old" else head_sha, file_path)

    prepared = prepare_review(
        engine,
        name,
        diffs,
        read,
        title=title,
        body=body,
        embedder=embedder,
        settings=settings,
        config=config,
    )
    return LocalReview(name, base_sha, head_sha, report, prepared, repo, replaced)
