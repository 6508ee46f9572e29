"""History coupling: mining a real repository made in the test (commits with known
co-changes), incrementally and after a rewrite; the co-change signal on top of it; and
the App's git-over-HTTP fetch from the fake GitHub (the real protocol, through
``git http-backend``) with its upkeep on push."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from app.config import Settings
from app.diff.changed import changed_functions
from app.diff.parse import parse_diff
from app.flows.index import index_repository, update_history
from app.git import LocalRepo
from app.indexing.history import HistoryLimits, mine_history
from app.retrieval.candidates import stale_chunk_ids
from app.retrieval.cochange import cochanged
from app.runtime import Runtime
from tests.conftest import GITHUB_INSTALLATION, GITHUB_REPO
from tests.fakes.github_server import FakeGitHub
from tests.gitrepo import GitRepo
from tests.support.indexing import index_tree

ENCODE = "def encode_user(user):\n    return {{'name': user.name{extra}}}\n"
DECODE = "def decode_user(data):\n    return User(data['name']{extra})\n"
VIEWS = "def show(request):\n    return render(request, {n})\n"


def _codec_repo(root: Path) -> GitRepo:
    """encode_user and decode_user change together twice; show changes alone twice, and
    once with encode_user."""
    repo = GitRepo(root)
    repo.write("codec/encode.py", ENCODE.format(extra=""))
    repo.write("codec/decode.py", DECODE.format(extra=""))
    repo.write("api/views.py", VIEWS.format(n=1)).write("README.md", "codec\n")
    repo.commit("Add the codec")
    for i, field in enumerate((", 'age': user.age", ", 'age': user.age, 'id': user.id")):
        repo.write("codec/encode.py", ENCODE.format(extra=field))
        repo.write("codec/decode.py", DECODE.format(extra=f", data.get('f{i}')"))
        repo.commit(f"Encode and decode field {i}")
    repo.write("api/views.py", VIEWS.format(n=2)).commit("Show two")
    repo.write("api/views.py", VIEWS.format(n=3)).commit("Show three")
    repo.write("codec/encode.py", ENCODE.format(extra=", 'x': 1"))
    repo.write("api/views.py", VIEWS.format(n=4))
    repo.commit("Encode x for the view")
    repo.write("README.md", "codec, documented\n").commit("Docs only")
    return repo


def _index(engine: Engine, name: str, repo: GitRepo) -> None:
    index_tree(engine, repo.root, name)


def _coupled(
    engine: Engine, name: str, repo: GitRepo, path: str, new: str
) -> dict[str, tuple[int, float]]:
    """What the co-change signal finds for a change of ``path`` to ``new``: the coupled
    definitions' names, how many commits changed them with it, and the score."""
    old = repo.git("show", f"HEAD:{path}")
    repo.write(path, new)
    diffs = parse_diff(repo.diff("HEAD"))
    changed = changed_functions(
        diffs, lambda p, side: old if side == "old" else (repo.root / p).read_bytes()
    )
    with engine.begin() as conn:
        repo_id = conn.execute(
            text("SELECT id FROM repositories WHERE full_name = :n"), {"n": name}
        ).scalar_one()
        exclude = stale_chunk_ids(conn, repo_id, changed, diffs)
        [hits] = cochanged(conn, repo_id, changed, exclude, 10)
        names = dict(
            conn.execute(
                text("SELECT id, qualified_name FROM code_chunks WHERE id = ANY(:ids)"),
                {"ids": [h.chunk_id for h in hits]},
            ).all()
        )
    return {names[h.chunk_id]: (h.together, h.score) for h in hits}


def test_functions_that_changed_together_are_coupled(engine: Engine, tmp_path: Path) -> None:
    repo = _codec_repo(tmp_path / "codec")
    _index(engine, "codec", repo)
    report = mine_history(engine, "codec", LocalRepo(repo.root), "HEAD")
    # the first commit has no parent to compare with; "Docs only" changed no source
    assert (report.commits, report.stored) == (7, 5)
    coupled = _coupled(
        engine, "codec", repo, "codec/encode.py", ENCODE.format(extra=", 'email': user.email")
    )
    assert list(coupled) == ["decode_user", "show"]  # best first: twice against once
    assert {name: together for name, (together, _) in coupled.items()} == {
        "decode_user": 2,
        "show": 1,
    }


def test_a_rarely_coupled_function_scores_below_a_faithful_one(
    engine: Engine, tmp_path: Path
) -> None:
    repo = _codec_repo(tmp_path / "codec")
    _index(engine, "codec", repo)
    mine_history(engine, "codec", LocalRepo(repo.root), "HEAD")
    from_views = _coupled(engine, "codec", repo, "api/views.py", VIEWS.format(n=5))
    repo.git("checkout", "--", ".")
    from_encode = _coupled(
        engine, "codec", repo, "codec/encode.py", ENCODE.format(extra=", 'email': user.email")
    )
    # show changed three times, once with encode_user; encode_user and decode_user
    # changed together in two of encode_user's three changes and all of decode_user's
    assert list(from_views) == ["encode_user"] and from_views["encode_user"][0] == 1
    assert from_views["encode_user"][1] < from_encode["decode_user"][1]
    assert from_encode["decode_user"][1] == pytest.approx((2 / 3) ** 0.5, rel=0.05)


def test_mining_is_incremental_and_starts_over_after_a_rewrite(
    engine: Engine, tmp_path: Path
) -> None:
    repo = _codec_repo(tmp_path / "codec")
    git = LocalRepo(repo.root)
    first = mine_history(engine, "codec", git, "HEAD~1")
    assert (first.commits, first.stored, first.restarted) == (6, 5, False)
    again = mine_history(engine, "codec", git, "HEAD~1")
    assert again.commits == 0  # nothing new
    later = mine_history(engine, "codec", git, "HEAD")
    assert later.commits == 1 and later.stored == 0  # the docs commit only
    repo.git("reset", "--hard", "HEAD~3")  # a force push: the mined head is gone
    repo.write("codec/decode.py", DECODE.format(extra=", 1")).commit("Rewritten")
    rewritten = mine_history(engine, "codec", git, "HEAD")
    assert rewritten.restarted and rewritten.commits == 5
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT count(*) FROM history_commits")).scalar_one()
    assert stored == 4  # Rewritten, Show two and the two field commits


def test_only_the_newest_commits_are_kept(engine: Engine, tmp_path: Path) -> None:
    repo = _codec_repo(tmp_path / "codec")
    mine_history(engine, "codec", LocalRepo(repo.root), "HEAD", HistoryLimits(max_commits=3))
    with engine.connect() as conn:
        subjects = conn.execute(text("SELECT count(*) FROM history_commits")).scalar_one()
    assert subjects == 2  # of the newest three, "Docs only" changed no source


def test_a_sweeping_commit_is_left_out(engine: Engine, tmp_path: Path) -> None:
    repo = _codec_repo(tmp_path / "codec")
    for i in range(5):
        repo.write(f"gen/m{i}.py", f"def f{i}():\n    return {i}\n")
    repo.commit("Add five modules")
    report = mine_history(engine, "codec", LocalRepo(repo.root), "HEAD", HistoryLimits(max_files=4))
    assert report.skipped_sweeps == 1


def test_the_app_fetches_history_over_git_http_and_keeps_it_current(
    run: Runtime, github: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)
    assert any(path == f"/{GITHUB_REPO}.git/git-upload-pack" for _, path in github.requests)
    clone = run.settings.data_dir / "history" / "acme+shop.git"
    assert (clone / "shallow").is_file() or (clone / "HEAD").is_file()
    with run.engine.connect() as conn:
        before = conn.execute(text("SELECT count(*) FROM history_commits")).scalar_one()
        head = conn.execute(text("SELECT history_commit FROM repositories")).scalar_one()
    # the first commit has no parent in the history; the second changed checkout.py
    assert before == 1 and head == github.repo.git("rev-parse", "HEAD").decode().strip()

    repo = github.repo
    repo.write("shop/pricing.py", repo.git("show", "HEAD:shop/pricing.py").decode() + "\n\n")
    repo.write("shop/checkout.py", repo.git("show", "HEAD:shop/checkout.py").decode() + "\n# x\n")
    pushed = repo.commit("Touch pricing and checkout")
    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)
    with run.engine.connect() as conn:
        after = conn.execute(text("SELECT count(*) FROM history_commits")).scalar_one()
        head = conn.execute(text("SELECT history_commit FROM repositories")).scalar_one()
    assert (after, head) == (2, pushed)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "ghs_fake" not in logged and "action=history.mined" in logged


def _indexed_paths(run: Runtime) -> set[str]:
    with run.engine.connect() as conn:
        return set(conn.execute(text("SELECT path FROM source_files")).scalars())


def test_the_apps_index_reads_what_the_tarball_leaves_out_from_its_clone(
    run: Runtime, github: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    repo = github.repo  # tests marked export-ignore: GitHub's tarball leaves them out
    repo.write(".gitattributes", "/tests export-ignore\n")
    repo.write("tests/test_pricing.py", "def test_total():\n    assert total([]) == 0\n")
    repo.commit("Keep the tests out of release archives")
    caplog.set_level(logging.INFO)

    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)

    assert {"tests/test_pricing.py", "shop/pricing.py"} <= _indexed_paths(run)
    logged = "\n".join(r.getMessage() for r in caplog.records if "index.done" in r.getMessage())
    assert "source=clone" in logged
    assert not any(path.endswith("/tarball/main") for _, path in github.requests)


def test_without_history_the_tarball_is_read_as_the_host_serves_it(
    github_settings: Settings, engine: Engine, github: FakeGitHub
) -> None:
    run = Runtime(github_settings.model_copy(update={"history_days": 0}), engine)
    repo = github.repo
    repo.write(".gitattributes", "/tests export-ignore\n")
    repo.write("tests/test_pricing.py", "def test_total():\n    assert total([]) == 0\n")
    repo.commit("Keep the tests out of release archives")

    index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)

    paths = _indexed_paths(run)
    assert "shop/pricing.py" in paths and "tests/test_pricing.py" not in paths


def test_a_failed_fetch_leaves_the_index_and_says_why(
    run: Runtime, github: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    github.fail_next("POST", "/git-upload-pack", [502])
    report = index_repository(run, GITHUB_REPO, GITHUB_INSTALLATION, full=False)
    assert report.chunks_total > 0
    skipped = [r.getMessage() for r in caplog.records if "history.skipped" in r.getMessage()]
    assert skipped and "acme/shop" in skipped[0] and "ghs_fake" not in skipped[0]
    with run.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM history_commits")).scalar_one() == 0
    update_history(run, GITHUB_REPO, GITHUB_INSTALLATION, "main")  # the next push catches up
    with run.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM history_commits")).scalar_one() == 1


def test_the_cli_index_of_a_git_work_tree_mines_its_history(
    cli_env: object, tmp_path: Path
) -> None:
    import json

    from typer.testing import CliRunner

    from app.cli import cli

    repo = _codec_repo(tmp_path / "codec")
    first = CliRunner().invoke(cli, ["index", str(repo.root), "--json"])
    assert first.exit_code == 0, first.output
    history = json.loads(first.stdout)["history"]
    assert (history["commits"], history["stored"], history["restarted"]) == (7, 5, False)
    again = CliRunner().invoke(cli, ["index", str(repo.root), "--json"])
    assert json.loads(again.stdout)["history"]["commits"] == 0  # incremental
