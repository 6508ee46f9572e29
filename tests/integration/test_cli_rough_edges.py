"""The CLI as a newcomer meets it: the base of a review on any branch, one index per
repository name, unknown names answered with the known ones, help that reads as
sentences, and nothing on stdout but the command's result."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.engine import URL
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings
from app.errors import ReviewbotError
from app.git import GitError, LocalRepo
from app.logs import configure_logging
from app.wording import counted
from tests.gitrepo import GitRepo
from tests.processes import clean_env

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def _repo(root: Path) -> GitRepo:
    repo = GitRepo(root)
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("first")
    repo.write(
        "calc.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    repo.commit("second")
    return repo


def test_a_new_branch_without_commits_reviews_its_uncommitted_change(tmp_path: Path) -> None:
    """On a branch made from an older main, with main moved on since: the change is the
    uncommitted edit, never main's newer commits."""
    repo = _repo(tmp_path / "r")
    fork_point = repo.git("rev-parse", "HEAD").decode().strip()
    repo.write("calc.py", "def add(a, b):\n    return a + b + 0\n")
    repo.commit("main moves on")
    repo.git("checkout", "-q", "-b", "feature", fork_point)
    repo.write("calc.py", (tmp_path / "r" / "calc.py").read_text() + "\n# edited\n")
    assert LocalRepo(repo.root).default_base() == fork_point


def test_the_base_on_a_branch_with_commits_and_on_main(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    main = repo.git("rev-parse", "HEAD").decode().strip()
    first = repo.git("rev-parse", "HEAD~1").decode().strip()
    git = LocalRepo(repo.root)
    assert git.default_base() == first  # on main, clean: the last commit
    repo.write("calc.py", "changed\n")
    assert git.default_base() == main  # on main with an edit: the edit
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("on the branch")
    assert git.default_base() == main  # the branch's own commits
    assert git.default_base("HEAD") == main


def test_one_commit_and_no_change_says_what_to_give(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("a.py", "x = 1\n")
    only = repo.commit("only")
    with pytest.raises(GitError, match=r"nothing to review.*give --base REF"):
        LocalRepo(repo.root).default_base()
    repo.write("a.py", "x = 2\n")
    assert LocalRepo(repo.root).default_base() == only


def test_review_name_keeps_two_folders_of_the_same_name_apart(cli_env: URL, tmp_path: Path) -> None:
    first, second = _repo(tmp_path / "x" / "small"), _repo(tmp_path / "y" / "small")
    second.write("calc.py", "def mul(a, b):\n    return a * b\n")
    second.commit("third")
    base = ["review", "--dry-run", "--json", "--repo"]
    assert runner.invoke(cli, [*base, str(first.root)]).exit_code == 0
    replaced = runner.invoke(cli, [*base, str(second.root)])
    assert replaced.exit_code == 0, replaced.output
    assert f"the index 'small' was built from {first.root}" in replaced.stderr
    assert "give --name" in replaced.stderr

    named = runner.invoke(cli, [*base, str(first.root), "--name", "x-small"])
    assert named.exit_code == 0, named.output
    assert "was built from" not in named.stderr
    listed = runner.invoke(cli, ["search", "--repo", "nope", "add"])
    assert listed.exit_code == 1
    assert isinstance(listed.exception, ReviewbotError)
    assert "'nope' is not indexed (indexed: small, x-small)" in str(listed.exception)


def test_unknown_repo_with_nothing_indexed_says_so(cli_env: URL, tmp_path: Path) -> None:
    diff = tmp_path / "d.diff"
    diff.write_text("--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    result = runner.invoke(cli, ["context", "--repo", "ghost", "--diff", str(diff)])
    assert result.exit_code == 1
    assert "'ghost' is not indexed (nothing is indexed yet)" in str(result.exception)


def test_an_error_leaves_stdout_empty(tmp_path: Path) -> None:
    """Progress goes to stderr: a failing command prints no blank line before `error:`."""
    (tmp_path / "plain").mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "review", "--repo", str(tmp_path / "plain")],
        cwd=tmp_path,
        env=clean_env(REVIEWBOT_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith("error: git rev-parse failed")


def test_help_reads_as_sentences_without_type_tags() -> None:
    top = runner.invoke(cli, ["--help"], env={"COLUMNS": "80"})
    assert top.exit_code == 0
    commands = top.stdout.split("Commands:")[1].strip().splitlines()
    assert len(commands) >= 12
    cut = [line for line in commands if line.rstrip().endswith("...")]
    assert cut == []  # every summary fits on its line
    for command in ("setup", "review", "doctor", "index"):
        shown = runner.invoke(cli, [command, "--help"], env={"COLUMNS": "80"}).stdout
        assert "<bool>" not in shown, command
    assert "  --force " in runner.invoke(cli, ["setup", "--help"]).stdout


def test_counts_are_singular_for_one() -> None:
    assert counted(1, "comment") == "1 comment"
    assert counted(0, "comment") == "0 comments"
    assert counted(2, "file") == "2 files"
    assert counted(1_500, "chunk") == "1,500 chunks"
    assert counted(3, "index", "indexes") == "3 indexes"


def test_http_client_request_lines_stay_out_of_the_output(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """openai's HTTP client logs each request at INFO as `httpx2`; a review prints none."""
    configure_logging(Settings(log_level="INFO"))
    for name in ("httpx", "httpx2", "httpcore"):
        assert not logging.getLogger(name).isEnabledFor(logging.INFO), name
    assert logging.getLogger("app.review").isEnabledFor(logging.INFO)


def test_doctor_without_a_code_host_checks_what_the_cli_needs(
    cli_env: URL, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = runner.invoke(cli, ["doctor", "--json"])
    data = json.loads(result.stdout)
    assert result.exit_code == 0, result.stdout
    assert data["mode"] == "cli"
    names = [c["name"] for c in data["checks"]]
    assert names == ["database", "review model", "summary model", "embeddings", "git", "tools"]
    shown = runner.invoke(cli, ["doctor"])
    assert "No code host is configured" in shown.stdout
    assert "on GitLab set GITLAB_TOKEN" in shown.stdout


def test_doctor_for_gitlab_alone_checks_no_github_app(
    cli_env: URL, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITLAB_URL", "http://127.0.0.1:9")  # nothing listens: a failure
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-0123456789abcdef")
    monkeypatch.setenv("GITLAB_WEBHOOK_SECRET", "a-long-random-gitlab-secret")
    monkeypatch.setenv("GITHUB_APP_ID", "")  # compose's empty value: unset
    data = json.loads(runner.invoke(cli, ["doctor", "--json"]).stdout)
    assert data["mode"] == "server"
    names = [c["name"] for c in data["checks"]]
    assert "GitHub App" not in names and any(n.startswith("GitLab") for n in names)
    queue = next(c for c in data["checks"] if c["name"] == "job queue")
    assert queue["server_only"] is True
    assert next(c for c in data["checks"] if c["name"] == "git")["server_only"] is False


def test_github_apps_fix_line_names_gitlab_too() -> None:
    from app.github.checks import github_app

    check = github_app(Settings())
    assert not check.ok and "reviewbot setup" in check.fix and "GITLAB_TOKEN" in check.fix
