"""Indexes of the code host's repositories, from archives of their default branch."""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
from collections.abc import Sequence

from app.db.queries.history import newest_mined
from app.db.queries.repositories import (
    delete_repository,
    index_state,
    indexed_commit,
    repository_id,
)
from app.forge.models import ChangedFile
from app.forge.protocol import ForgeError, RepoHost
from app.git import GitError, LocalRepo, clone_path
from app.indexing.archive import ArchiveLimits, GitArchiveSource, TarballSource, archive_limits
from app.indexing.changed_files import ChangedFilesSource
from app.indexing.embedder import select_embedder
from app.indexing.history import HistoryLimits, mine_history
from app.indexing.indexer import Indexer, IndexOptions, IndexReport
from app.indexing.links import LINK_VERSION
from app.indexing.report import IndexBusy
from app.indexing.source_tree import CONFIG_FILE, FileSource
from app.indexing.summarizer import select_summarizer
from app.logs import kv
from app.runtime import Runtime

log = logging.getLogger(__name__)
#: How the index read the tree, as the log says it.
_SOURCES: dict[type, str] = {ChangedFilesSource: "compare", GitArchiveSource: "clone"}
INDEX_LOCK_WAIT_SECONDS = 600.0


def index_at(
    run: Runtime,
    api: RepoHost,
    repo: str,
    ref: str,
    full: bool = False,
    clone: LocalRepo | None = None,
) -> IndexReport:
    """Index ``repo`` as of ``ref``. After a first index, only the files changed since the
    commit last indexed are fetched (``changes_since``); otherwise, or when that cannot be
    trusted, the whole tree is read: from the history's clone (``clone``, else the one on
    disk) when it holds the commit, else from the host's tarball, streamed member by
    member (nothing is unpacked to disk). The host's tarball leaves out what the tree's
    ``.gitattributes`` marks ``export-ignore`` (tests and docs, in many packages); the
    clone is read as committed (``app/git_archive.py``). Either way unchanged content
    costs a hash at most; only changed content is chunked, summarised and embedded.
    ``.reviewbot.toml`` is read from the same ref."""
    source: FileSource | None = None if full else changes_since(run, api, repo, ref)
    limits = archive_limits(run.settings)
    if source is None and (local := clone or _clone_on_disk(run, repo)) is not None:
        source = _from_clone(local, api.commit_sha(ref), limits)
    with tempfile.TemporaryFile(prefix="tarball-") as spool:
        if source is None:  # the tarball, spooled to disk as it downloads: never in memory
            api.download_tarball(ref, spool, limits.max_total_bytes)
            source = TarballSource(f"{repo}@{ref}", spool, api.content(CONFIG_FILE, ref), limits)
        return _index(run, repo, ref, source)


def _clone_on_disk(run: Runtime, repo: str) -> LocalRepo | None:
    """The bare clone an earlier history fetch left (``update_history``), if any."""
    with contextlib.suppress(GitError):  # a name that cannot be a clone's
        path = clone_path(run.settings.data_dir, repo)
        if (path / "HEAD").is_file():
            return LocalRepo(path)
    return None


def _from_clone(clone: LocalRepo, commit: str, limits: ArchiveLimits) -> GitArchiveSource | None:
    """``commit`` read from ``clone``, when the clone holds it (a shallow history fetch
    holds its newest commits' trees whole)."""
    try:
        clone.resolve(commit)
        config = clone.read(commit, CONFIG_FILE)
    except GitError:
        return None
    return GitArchiveSource(str(clone.root), commit, config, limits)


def _index(run: Runtime, repo: str, ref: str, source: FileSource) -> IndexReport:
    report = Indexer(
        run.engine,
        repo,
        source,
        embedder=select_embedder(run.settings),
        summarizer=select_summarizer(run.settings),
        # Another run of this repository (a review indexing it, the CLI) finishes first:
        # waiting costs no attempt, unlike failing with IndexBusy and being retried.
        # Without model calls: reviewable as soon as chunks, links and full-text rows are
        # stored; summaries and vectors follow in their own job (app/flows/enrich.py).
        options=IndexOptions(
            lock_wait_seconds=INDEX_LOCK_WAIT_SECONDS,
            enrich=False,
            # a push's few rows are done at once, in about the time of one review
            inline_enrich_max=run.settings.index_inline_enrich_max,
        ),
    ).run()
    log.info(
        kv(
            "index.done",
            repo=repo,
            ref=ref,
            source=_SOURCES.get(type(source), "tarball"),
            changed=report.files_changed,
            chunks_added=report.chunks_added,
        )
    )
    return report


def changes_since(run: Runtime, api: RepoHost, repo: str, ref: str) -> ChangedFilesSource | None:
    """The files changed between the commit last indexed and ``ref``, from the compare
    API (or, for a ``ref`` older than it, the files changed since ``ref``, undone); None
    when the tarball must be read instead: no commit indexed yet, links of an older
    version to rebuild, ``ref`` on another line of history (a force push), a
    comparison GitHub cut short (300 files) or refuses (too big), or a changed
    ``.reviewbot.toml`` (the index rules changed for every file)."""
    with run.engine.begin() as conn:
        last, oldest_links = index_state(conn, repo)
    if last is None or (oldest_links is not None and oldest_links < LINK_VERSION):
        return None
    head = api.commit_sha(ref)
    compared = api.compare(last, head)
    backwards = compared is not None and compared.status == "behind"
    if backwards:  # a PR's base older than the index: what changed since, undone
        compared = api.compare(head, last)
    if compared is None or compared.status not in {"ahead", "identical"} or not compared.complete:
        return None
    changed, removed = changed_paths(compared.files, undo=backwards)
    if CONFIG_FILE in changed or CONFIG_FILE in removed:
        return None
    return ChangedFilesSource(
        f"{repo}@{head[:12]}",
        head,
        changed,
        removed,
        lambda path: api.content(path, head),
        api.content(CONFIG_FILE, head),
    )


def changed_paths(files: Sequence[ChangedFile], undo: bool = False) -> tuple[list[str], list[str]]:
    """(paths to fetch, paths deleted) to bring an index from a comparison's base to its
    head; with ``undo``, from its head back to its base. A rename is both."""
    changed: list[str] = []
    removed: list[str] = []
    for entry in files:
        path, status, previous = entry.path, entry.status, entry.previous_path
        if status in {"added", "copied", "removed"}:
            exists_after = (status == "removed") == undo
            (changed if exists_after else removed).append(path)
            continue
        changed.append(path)  # modified, changed: at either end
        if status == "renamed" and previous and previous != path:
            old, new = (previous, path) if not undo else (path, previous)
            changed[-1] = new
            removed.append(old)
    return changed, removed


def index_repository(run: Runtime, repo: str, installation_id: int, full: bool) -> IndexReport:
    """The default branch's head. Unchanged files cost nothing (content hashes), so a push
    re-chunks, re-summarises and re-embeds only what it changed. Its history is fetched
    first (a whole-tree read comes from that clone: ``index_at``) and mined after."""
    api = run.host.repository(installation_id, repo)
    branch = api.default_branch()
    with run.engine.begin() as conn:
        repository_id(conn, repo, installation_id=installation_id, default_branch=branch)
    fetched = _fetch_history(run, repo, installation_id, branch)  # first: the index reads it
    report = index_at(run, api, repo, branch, full=full, clone=fetched[0] if fetched else None)
    if fetched is not None:
        _mine(run, repo, *fetched)
    return report


def update_history(run: Runtime, repo: str, installation_id: int, branch: str) -> None:
    """Fetch the default branch's new commits (a bare shallow clone under the data
    directory, made on first use) and mine them for the co-change signal. History is an
    extra: when it cannot be had, the index stands and the next push tries again."""
    fetched = _fetch_history(run, repo, installation_id, branch)
    if fetched is not None:
        _mine(run, repo, *fetched)


def _fetch_history(
    run: Runtime, repo: str, installation_id: int, branch: str
) -> tuple[LocalRepo, str] | None:
    """The clone with ``branch``'s new commits fetched, and its head; None (logged) when
    history is off or cannot be had."""
    settings = run.settings
    if settings.history_days <= 0:
        return None
    try:
        with run.engine.begin() as conn:
            newest = newest_mined(conn, repo)
        into = clone_path(settings.data_dir, repo)
        return run.host.fetch_history(
            installation_id, repo, branch, into, settings.history_days, newest
        )
    except (GitError, ForgeError) as exc:
        log.warning(kv("history.skipped", repo=repo, error=exc))
        return None


def _mine(run: Runtime, repo: str, clone: LocalRepo, head: str) -> None:
    limits = HistoryLimits(max_commits=run.settings.history_max_commits)
    try:
        mine_history(run.engine, repo, clone, head, limits)
    except (GitError, IndexBusy) as exc:
        log.warning(kv("history.skipped", repo=repo, error=exc))


def purge_repository(run: Runtime, repo: str) -> None:
    """Forget a repository: its rows (files, chunks, reviews, index runs, by cascade)."""
    with run.engine.begin() as conn:
        delete_repository(conn, repo)
    with contextlib.suppress(GitError):  # a name that was never a clone's
        shutil.rmtree(clone_path(run.settings.data_dir, repo), ignore_errors=True)
    log.info(kv("repository.purged", repo=repo))


def ensure_indexed(run: Runtime, api: RepoHost, repo: str, ref: str) -> None:
    """Index ``repo`` at ``ref`` unless an index run of it has finished. One that is
    under way (the installation's) is waited for, not reviewed half-written: its rows
    are committed batch by batch, and the index lock makes this run wait for it."""
    with run.engine.connect() as conn:
        indexed = indexed_commit(conn, repo) is not None
    if not indexed:
        index_at(run, api, repo, ref)
