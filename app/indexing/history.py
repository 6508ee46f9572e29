"""The repository's change history, mined for the co-change signal: for each commit of
the default branch's first-parent line (a merge: the whole pull request it merged), the
source files it changed and the definitions (functions, methods, classes) those changes
fell in.

Mining reads git, nothing else: a local repository for the CLI, a bare shallow fetch
for the App (``app/forge/git_fetch.py``). It is incremental: the newest commit mined is
kept (``repositories.history_commit``), and a later run reads only the commits after
it; a history that no longer contains it (a force push) is mined again from scratch.
Commits that change more than ``max_files`` source files (sweeping renames, formatting)
say nothing about which code belongs together and are left out. At most
``max_commits`` commits are kept, the newest.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from app.db.chunk_types import ChunkType
from app.db.queries import release_session_lock, take_session_lock
from app.db.queries.history import (
    ChangeSet,
    analyze_history,
    forget_history,
    history_head,
    prune_history,
    refresh_symbol_totals,
    set_history_head,
    store_change_sets,
)
from app.db.queries.repositories import repository_id
from app.git import ChangedLines, GitError, LocalRepo, LoggedCommit
from app.indexing.files import changed_chunks, parse_file, skip_reason
from app.indexing.languages import LANGUAGES, detect_language
from app.indexing.report import HistoryReport, IndexBusy
from app.logs import kv

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class HistoryLimits:
    """How much history is mined and kept."""

    max_commits: int = 2000  # the newest first-parent commits kept
    max_files: int = 30  # a commit changing more source files is a sweep: left out
    batch: int = 200  # commits read from git at once
    lock_wait_seconds: float = 600.0


#: git pathspecs of the files a grammar reads (``*`` crosses folders in a pathspec)
SOURCE_PATHSPECS = tuple(
    sorted({f"*{ext}" for spec in LANGUAGES for ext in spec.extensions})
    + sorted({f"*/{name}" for spec in LANGUAGES for name in spec.filenames})
    + sorted({name for spec in LANGUAGES for name in spec.filenames})
)


def is_source(path: str) -> bool:
    """A file the history keeps: one with a grammar, not generated, vendored or locked."""
    return detect_language(path) is not None and skip_reason(path, b"") is None


def changed_definitions(path: str, data: bytes, lines: ChangedLines) -> list[str]:
    """The qualified names of the definitions ``lines`` changed in ``data`` (the file's
    new version), most specific first per line; a removal counts for the definition that
    holds the lines on both sides of it. Module-level code counts for the file only. Pure."""
    chunks = parse_file(path, data).chunked.chunks
    touched = set(lines.added)
    for after in lines.removed_after:
        inside = [c for c in chunks if c.contains_line(after) and c.contains_line(after + 1)]
        if inside:
            touched.add(after)
    names = [
        c.qualified_name
        for c in changed_chunks(chunks, touched)
        if c.chunk_type != ChunkType.MODULE and c.qualified_name
    ]
    return list(dict.fromkeys(names))


def change_set(
    commit: LoggedCommit, changed: Iterable[ChangedLines], blobs: dict[str, bytes]
) -> ChangeSet:
    """What ``commit`` changed, from its source files' changed lines and new versions."""
    changes: list[tuple[str, str]] = []
    for lines in changed:
        if not is_source(lines.path) or lines.blob not in blobs:
            continue
        changes.append((lines.path, ""))
        for name in changed_definitions(lines.path, blobs[lines.blob], lines):
            changes.append((lines.path, name))
    return ChangeSet(commit.sha, commit.committed_at, tuple(changes))


def mine_history(
    engine: Engine,
    repo: str,
    git: LocalRepo,
    until: str,
    limits: HistoryLimits | None = None,
) -> HistoryReport:
    """Bring ``repo``'s mined history up to ``until`` (a commit of ``git``). Idempotent:
    a run that is interrupted leaves what it stored, and the next one completes it."""
    limits = limits or HistoryLimits()
    started = time.perf_counter()
    report = HistoryReport()
    head = git.resolve(until)
    with engine.connect() as lock_conn:
        key = f"reviewbot:history:{repo}"
        if not take_session_lock(lock_conn, key, limits.lock_wait_seconds):
            raise IndexBusy(f"another run is mining the history of {repo}; try again later")
        try:
            _mine_locked(engine, repo, git, head, limits, report)
        finally:
            release_session_lock(lock_conn, key)
    report.head = head
    report.seconds = time.perf_counter() - started
    log.info(kv("history.mined", repo=repo, **report.as_json()))
    return report


def _mine_locked(
    engine: Engine,
    repo: str,
    git: LocalRepo,
    head: str,
    limits: HistoryLimits,
    report: HistoryReport,
) -> None:
    with engine.begin() as conn:
        repo_id = repository_id(conn, repo)
        last = history_head(conn, repo_id)
    if last == head:
        return
    after = last if last is not None and _is_ancestor(git, last, head) else None
    if last is not None and after is None:
        report.restarted = True
        with engine.begin() as conn:
            forget_history(conn, repo_id)
    commits = git.first_parent_log(head, after, limits.max_commits)
    report.commits = len(commits)
    wanted = []
    for commit in commits:
        sources = sum(1 for p in commit.paths if is_source(p))
        if commit.parent is None or sources == 0:
            continue
        if sources > limits.max_files:
            report.skipped_sweeps += 1
            continue
        wanted.append(commit)
    for start in range(0, len(wanted), limits.batch):
        sets = read_change_sets(git, wanted[start : start + limits.batch])
        with engine.begin() as conn:
            report.stored += store_change_sets(conn, repo_id, sets)
    with engine.begin() as conn:
        prune_history(conn, repo_id, limits.max_commits)
        refresh_symbol_totals(conn, repo_id)
        set_history_head(conn, repo_id, head)
        if report.stored:
            analyze_history(conn)


def read_change_sets(git: LocalRepo, commits: Sequence[LoggedCommit]) -> list[ChangeSet]:
    """The change sets of ``commits``, from two git processes (patches, then blobs). A
    commit git cannot diff (an object missing from a partial or damaged clone) is left
    out, not the whole batch."""
    try:
        patches = git.changed_lines(commits, SOURCE_PATHSPECS)
    except GitError:
        patches = {}
        for commit in commits:
            try:
                patches.update(git.changed_lines([commit], SOURCE_PATHSPECS))
            except GitError as exc:
                log.warning(kv("history.commit_unreadable", commit=commit.sha, error=exc))
    wanted = [c.blob for changed in patches.values() for c in changed if is_source(c.path)]
    blobs = git.blobs(list(dict.fromkeys(wanted)))
    sets = [change_set(c, patches.get(c.sha, ()), blobs) for c in commits]
    return [s for s in sets if s.changes]


def _is_ancestor(git: LocalRepo, older: str, newer: str) -> bool:
    try:
        git.git("merge-base", "--is-ancestor", older, newer)
    except GitError:
        return False
    return True


def mine_work_tree(
    engine: Engine, repo: str, root: Path, limits: HistoryLimits
) -> HistoryReport | None:
    """The history of the git repository whose top folder ``root`` is, up to HEAD; None
    when ``root`` is not the top of a repository with a commit."""
    git = LocalRepo(root)
    try:
        top = git.git("rev-parse", "--show-toplevel").decode().strip()
        if Path(top).resolve() != root.resolve():
            return None
        git.resolve("HEAD")
    except GitError:
        return None
    return mine_history(engine, repo, git, "HEAD", limits)
