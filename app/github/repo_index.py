"""Indexes of GitHub repositories, from tarballs of their default branch."""

from __future__ import annotations

import io
import logging
import tarfile
import tempfile
from pathlib import Path

from sqlalchemy import text

from app.github.client import RepoApi
from app.indexing.embedder import select_embedder
from app.indexing.indexer import Indexer, IndexReport
from app.indexing.store import repository_id
from app.indexing.summarizer import select_summarizer
from app.jobs.queue import Runtime
from app.logs import kv

log = logging.getLogger(__name__)


def extract_tarball(data: bytes, target: Path) -> Path:
    """Unpack GitHub's tarball into ``target``; return its single top-level folder."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        tar.extractall(target, filter="data")
    roots = [p for p in target.iterdir() if p.is_dir()]
    return roots[0] if len(roots) == 1 else target


def index_at(run: Runtime, api: RepoApi, repo: str, ref: str) -> IndexReport:
    """Index ``repo`` as of ``ref`` from a private temporary tree, so concurrent jobs never
    share one. Unchanged files cost a read and a hash; only changed content is chunked,
    summarised and embedded."""
    scratch = run.settings.data_dir / "trees"
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=scratch, prefix="github-") as tmp:
        root = extract_tarball(api.tarball(ref), Path(tmp))
        report = Indexer(
            run.engine,
            repo,
            root,
            embedder=select_embedder(run.settings),
            summarizer=select_summarizer(run.settings),
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
