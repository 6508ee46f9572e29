"""Indexes of GitHub repositories, from tarballs of their default branch."""

from __future__ import annotations

import logging

from sqlalchemy import text

from app.github.client import RepoApi
from app.indexing.archive import TarballSource
from app.indexing.embedder import select_embedder
from app.indexing.indexer import Indexer, IndexOptions, IndexReport
from app.indexing.source_tree import CONFIG_FILE
from app.indexing.store import repository_id
from app.indexing.summarizer import select_summarizer
from app.jobs.queue import Runtime
from app.logs import kv

log = logging.getLogger(__name__)
INDEX_LOCK_WAIT_SECONDS = 600.0


def index_at(run: Runtime, api: RepoApi, repo: str, ref: str) -> IndexReport:
    """Index ``repo`` as of ``ref`` from its tarball, streamed member by member (nothing is
    unpacked to disk). Unchanged files cost a hash; only changed content is chunked,
    summarised and embedded. ``.reviewbot.toml`` is read from the same ref."""
    source = TarballSource(
        f"{repo}@{ref}",
        api.tarball(ref),
        api.content(CONFIG_FILE, ref),
        run.settings.archive_limits,
    )
    report = Indexer(
        run.engine,
        repo,
        source,
        embedder=select_embedder(run.settings),
        summarizer=select_summarizer(run.settings),
        # Another run of this repository (a review indexing it, the CLI) finishes first:
        # waiting costs no attempt, unlike failing with IndexBusy and being retried.
        options=IndexOptions(lock_wait_seconds=INDEX_LOCK_WAIT_SECONDS),
    ).run()
    log.info(
        kv(
            "index.done",
            repo=repo,
            ref=ref,
            changed=report.files_changed,
            chunks_added=report.chunks_added,
        )
    )
    return report


def index_repository(run: Runtime, repo: str, installation_id: int, full: bool) -> IndexReport:
    """The default branch's head. Unchanged files cost nothing (content hashes), so a push
    re-chunks, re-summarises and re-embeds only what it changed."""
    api = RepoApi(run.github.installation(installation_id), repo)
    branch = api.default_branch()
    with run.engine.begin() as conn:
        repository_id(conn, repo, installation_id=installation_id, default_branch=branch)
    return index_at(run, api, repo, branch)


def purge_repository(run: Runtime, repo: str) -> None:
    """Forget a repository: its rows (files, chunks, reviews, index runs, by cascade)."""
    with run.engine.begin() as conn:
        conn.execute(text("DELETE FROM repositories WHERE full_name = :n"), {"n": repo})
    log.info(kv("repository.purged", repo=repo))
