"""Push updates from the compare API: only the changed files are downloaded, and the index
ends exactly as a whole-tree index of the same commit would; the whole tree when the
comparison cannot be trusted (cut short, another line of history, new index rules), read
from the history's clone, or from the tarball when history is off."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from app.flows.index import index_at, index_repository
from app.indexing.archive import ArchiveLimits, GitArchiveSource
from app.indexing.embedder import select_embedder
from app.runtime import Runtime
from tests.conftest import GITHUB_INSTALLATION, GITHUB_REPO
from tests.fakes.github_server import FakeGitHub
from tests.support.indexing import index_tree

BULK_FILES = 10_000


def _big(github: FakeGitHub) -> None:
    """10,000 more files (data the index rules leave out, as a monorepo's would be)."""
    repo = github.repo
    bulk = repo.root / "bulk"
    for i in range(BULK_FILES):
        folder = bulk / f"{i // 500:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"record_{i}.json").write_text(f'{{"id": {i}}}\n')
    repo.write(".reviewbot.toml", '[index]\nexclude = ["bulk/**"]\n')
    repo.commit("Add records")


def _downloads(github: FakeGitHub, since: int) -> list[str]:
    return [
        path.split("/", 4)[-1] for _, path in github.requests[since:] if path.startswith("/repos")
    ]


def _read(github: FakeGitHub, since: int) -> str:
    """How the runs since request ``since`` read the tree: "tarball", "files" (changed
    files one by one) or "clone" (the history's: no file downloaded)."""
    downloads = _downloads(github, since)
    if any("tarball" in d for d in downloads):
        return "tarball"
    return "files" if any(d.startswith("contents/") for d in downloads) else "clone"


def _runtime(run: Runtime, history: bool) -> Runtime:
    if history:
        return run
    return Runtime(run.settings.model_copy(update={"history_days": 0}), run.engine)


def _files(engine: Engine, repo: str) -> set[tuple[str, str]]:
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT f.path, c.content_hash FROM source_files f JOIN repositories r"
                " ON r.id = f.repository_id LEFT JOIN code_chunks c ON c.source_file_id = f.id"
                " WHERE r.full_name = :n"
            ),
            {"n": repo},
        )
        return {(path, content or "") for path, content in rows}


def _whole_tree(run: Runtime, github: FakeGitHub, rev: str, name: str) -> set[tuple[str, str]]:
    """The index a whole-tree run at ``rev`` makes, under another repository name."""
    listed = github.repo.git("ls-tree", "--name-only", rev).decode().split()
    config = (
        github.repo.git("show", f"{rev}:.reviewbot.toml") if ".reviewbot.toml" in listed else None
    )
    source = GitArchiveSource(str(github.repo.root), rev, config, ArchiveLimits())
    index_tree(run.engine, source, name, embedder=select_embedder(run.settings))
    return _files(run.engine, name)


def _last_indexed(engine: Engine) -> str:
    with engine.connect() as conn:
        return str(
            conn.execute(
                text("SELECT last_indexed_commit FROM repositories WHERE full_name = :n"),
                {"n": GITHUB_REPO},
            ).scalar_one()
        )


def test_a_push_of_three_files_downloads_those_files_not_the_tarball(
    run: Runtime, github: FakeGitHub
) -> None:
    _big(github)
    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)
    assert _read(github, 0) == "clone"  # nothing indexed yet: the whole tree, as fetched

    repo = github.repo
    repo.write("shop/checkout.py", "def checkout_total(cart):\n    return 0\n")
    repo.write("shop/refunds.py", "def refund(order):\n    return -order.total\n")
    repo.git("mv", "shop/pricing.py", "shop/prices.py")
    head = repo.commit("Refunds; pricing renamed")
    since = len(github.requests)

    second = index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)

    downloads = _downloads(github, since)
    assert not any("tarball" in d for d in downloads)
    fetched = sorted(d.split("/", 1)[1] for d in downloads if d.startswith("contents/"))
    assert fetched == [
        ".reviewbot.toml",
        "shop/checkout.py",
        "shop/prices.py",
        "shop/refunds.py",
    ]
    assert second.files_changed == 3 and second.files_deleted == 1
    assert _last_indexed(run.engine) == head
    assert _files(run.engine, GITHUB_REPO) == _whole_tree(run, github, head, "check/whole")


def test_an_index_moved_back_to_an_older_commit_undoes_the_changes_since(
    run: Runtime, github: FakeGitHub
) -> None:
    """A PR based before the commit last indexed: the files changed since, undone."""
    older = github.repo.git("rev-parse", "HEAD").decode().strip()
    repo = github.repo
    repo.write("shop/refunds.py", "def refund(order):\n    return -order.total\n")
    repo.git("mv", "shop/pricing.py", "shop/prices.py")
    repo.commit("Refunds; pricing renamed")
    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)
    since = len(github.requests)

    api = run.host.repository(GITHUB_INSTALLATION, GITHUB_REPO)
    index_at(run, api, GITHUB_REPO, older)

    assert not any("tarball" in d for d in _downloads(github, since))
    assert _last_indexed(run.engine) == older
    assert _files(run.engine, GITHUB_REPO) == _whole_tree(run, github, older, "check/older")


def _force_push(github: FakeGitHub) -> None:
    repo = github.repo
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.write("shop/refunds.py", "def refund(order):\n    return 0\n")
    repo.commit("Rewritten history")


def _many_files(github: FakeGitHub) -> None:
    # GitHub lists at most 300 files in a comparison, and so does the fake: more are cut
    for i in range(301):
        github.repo.write(f"shop/extra_{i}.py", f"def extra_{i}():\n    return {i}\n")
    github.repo.commit("301 files")


def _new_rules(github: FakeGitHub) -> None:
    github.repo.write(".reviewbot.toml", '[index]\nexclude = ["vendor_samples/**"]\n')
    github.repo.commit("Index less")


@pytest.mark.parametrize("history", [True, False], ids=["clone", "no-history"])
@pytest.mark.parametrize(
    "change",
    [_force_push, _many_files, _new_rules],
    ids=["force-push", "comparison-cut-short", "index-rules-changed"],
)
def test_the_whole_tree_when_the_comparison_cannot_be_trusted(
    run: Runtime, github: FakeGitHub, change: object, history: bool
) -> None:
    run = _runtime(run, history)
    github.repo.write(".reviewbot.toml", "[index]\n")
    github.repo.commit("Index rules")
    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)
    assert callable(change)
    change(github)
    head = github.repo.git("rev-parse", "HEAD").decode().strip()
    since = len(github.requests)

    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)

    assert _read(github, since) == ("clone" if history else "tarball")
    assert _files(run.engine, GITHUB_REPO) == _whole_tree(run, github, head, "check/whole")


@pytest.mark.parametrize("history", [True, False], ids=["clone", "no-history"])
def test_a_full_reindex_reads_the_whole_tree(
    run: Runtime, github: FakeGitHub, history: bool
) -> None:
    run = _runtime(run, history)
    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)
    since = len(github.requests)
    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=True)
    assert _read(github, since) == ("clone" if history else "tarball")


def test_a_file_gone_by_the_time_it_is_fetched_is_deleted(
    run: Runtime, github: FakeGitHub, tmp_path: Path
) -> None:
    """The compare lists a file that 404s when fetched (a race with another push)."""
    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)
    github.repo.write("shop/checkout.py", "def checkout_total(cart):\n    return 1\n")
    github.repo.commit("Change checkout")
    github.fail_next("GET", "/contents/shop/checkout.py", [404])

    report = index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)

    assert report.files_deleted == 1
    assert "shop/checkout.py" not in {p for p, _ in _files(run.engine, GITHUB_REPO)}
