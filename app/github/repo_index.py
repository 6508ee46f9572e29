"""Indexes of GitHub repositories, from tarballs of their default branch."""

from __future__ import annotations

import io
import logging
import re
import shutil
import tarfile
import tempfile
from pathlib import Path

from sqlalchemy import text

from app.github.client import RepoApi
from app.indexing.embedder import select_embedder
from app.indexing.indexer import Indexer, IndexReport
from app.indexing.summarizer import select_summarizer
from app.jobs.queue import Runtime
from app.logs import kv

log = logging.getLogger(__name__)


def tree_dir(run: Runtime, repo: str) -> Path:
    return run.settings.data_dir / "trees" / "github" / re.sub(r"[^A-Za-z0-9_.-]+", "__", repo)


def extract_tarball(data: bytes, target: Path) -> None:
    """Unpack GitHub's tarball (one top-level folder) into ``target``, replacing it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            tar.extractall(tmp, filter="data")
        roots = [p for p in Path(tmp).iterdir() if p.is_dir()]
        source = roots[0] if len(roots) == 1 else Path(tmp)
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(source), target)


def index_at(run: Runtime, api: RepoApi, repo: str, ref: str) -> IndexReport:
    """Index ``repo`` as of ``ref``: download, unpack, and let the indexer skip what it has."""
    target = tree_dir(run, repo)
    extract_tarball(api.tarball(ref), target)
    report = Indexer(
        run.engine,
        repo,
        target,
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
        conn.execute(
            text(
                "INSERT INTO repositories (full_name, installation_id, default_branch)"
                " VALUES (:n, :i, :b) ON CONFLICT (full_name) DO UPDATE SET"
                " installation_id = excluded.installation_id,"
                " default_branch = excluded.default_branch, updated_at = now()"
            ),
            {"n": repo, "i": installation_id, "b": branch},
        )
    return index_at(run, api, repo, branch)


def purge_repository(run: Runtime, repo: str) -> None:
    """Forget a repository: its rows (files, chunks, reviews by cascade) and its tree."""
    with run.engine.begin() as conn:
        conn.execute(text("DELETE FROM repositories WHERE full_name = :n"), {"n": repo})
    shutil.rmtree(tree_dir(run, repo), ignore_errors=True)
    log.info(kv("repository.purged", repo=repo))
