"""`reviewbot review --pr URL` against the fake GitHub and the fake GitLab, with a token
from the environment as a CI job has one: one review with inline comments, the
walkthrough and the gate, exactly once per head, incremental on a new head, and one
`error:` line naming the fix for each kind of bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import URL
from typer.testing import CliRunner

from app.ci.cache import write_stamp
from app.cli import cli
from app.db.migrate import head_revision
from app.errors import ConfigError
from tests.conftest import GITHUB_REPO, GITLAB_TOKEN
from tests.fakes.github_server import FakeGitHub
from tests.fakes.gitlab_server import FakeGitLab
from tests.fakes.openai_server import FakeOpenAI
from tests.processes import clean_env
from tests.shop_repo import review_reply

TOKEN = "ghs_actions0123456789"
runner = CliRunner()


@pytest.fixture
def ci_env(
    cli_env: URL, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> pytest.MonkeyPatch:
    """A CI job's environment: the model, the gate, the database of this test."""
    fake_openai.chat_reply = review_reply
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    monkeypatch.setenv("REVIEWBOT_REVIEW_GATE", "minor")
    monkeypatch.setenv("REVIEWBOT_LLM_MAX_RETRIES", "0")
    return monkeypatch


@pytest.fixture
def on_github(ci_env: pytest.MonkeyPatch, github: FakeGitHub) -> FakeGitHub:
    github.accept_token(TOKEN)
    ci_env.setenv("GITHUB_TOKEN", TOKEN)
    ci_env.setenv("GITHUB_API_URL", github.base_url)
    return github


@pytest.fixture
def on_gitlab(ci_env: pytest.MonkeyPatch, gitlab: FakeGitLab) -> FakeGitLab:
    ci_env.setenv("GITLAB_TOKEN", GITLAB_TOKEN)
    ci_env.setenv("GITLAB_URL", gitlab.base_url)
    return gitlab


def review(*args: str) -> dict[str, object]:
    result = runner.invoke(cli, ["review", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def pull_url(github: FakeGitHub, number: int = 7) -> str:
    return f"{github.base_url}/{GITHUB_REPO}/pull/{number}"


def test_a_pull_request_by_url_gets_one_review_with_comments_walkthrough_and_gate(
    on_github: FakeGitHub, tmp_path: Path
) -> None:
    github = on_github
    out = tmp_path / "review.json"
    ran = review("--pr", pull_url(github), "--post", "--output", str(out))
    assert ran["outcomes"] == {"review": "posted", "describe": "off"}
    assert json.loads(out.read_text()) == ran
    [posted] = github.reviews
    assert posted["commit_id"] == github.pulls[7].head
    [comment] = posted["comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("shop/checkout.py", 7, "RIGHT")
    assert "| `shop/checkout.py` |" in posted["body"]  # the walkthrough
    assert f"reviewbot:head={github.pulls[7].head}" in posted["body"]
    [check] = github.check_runs
    assert check["head_sha"] == github.pulls[7].head
    assert check["conclusion"] == "failure"  # a major finding under gate = "minor"
    assert ran["review"]["body"] == posted["body"]

    again = review("--pr", pull_url(github), "--post")
    assert again["outcomes"]["review"] == "reconciled"
    assert len(github.reviews) == 1


def test_without_post_it_prints_and_posts_nothing(on_github: FakeGitHub) -> None:
    github = on_github
    ran = review("--pr", pull_url(github))
    assert ran["posted"] is False and ran["outcomes"]["review"] == "posted"
    assert ran["review"]["comments"][0]["path"] == "shop/checkout.py"
    assert github.reviews == [] and github.check_runs == [] and github.comments == []
    # a dry run leaves no state that stops the real one
    assert review("--pr", pull_url(github), "--post")["outcomes"]["review"] == "posted"
    assert len(github.reviews) == 1


def test_a_merge_request_by_url_gets_one_review(on_gitlab: FakeGitLab) -> None:
    gitlab = on_gitlab
    url = f"{gitlab.base_url}/acme/shop/-/merge_requests/7"
    ran = review("--pr", url, "--post")
    assert ran["outcomes"]["review"] == "posted"
    assert ran["repository"] == f"{gitlab.base_url.split('://')[1]}/acme/shop"
    inline = [d for d in gitlab.discussions(7) if d["notes"][0].get("position")]
    assert len(inline) == 1
    [summary] = gitlab.summaries(7)
    assert "| `shop/checkout.py` |" in summary["body"]  # the walkthrough
    assert gitlab.status_records[-1]["status"] == "failed"  # the gate: a finding is open
    assert review("--pr", url, "--post")["outcomes"]["review"] == "reconciled"
    assert len([d for d in gitlab.discussions(7) if d["notes"][0].get("position")]) == 1


def test_bad_input_is_one_error_naming_the_fix(on_github: FakeGitHub) -> None:
    github = on_github
    cases = {
        "https://bitbucket.org/acme/shop/pull-requests/7": "not a pull request URL",
        pull_url(github, 404): "no pull request 404 in acme/shop",
    }
    for url, said in cases.items():
        with pytest.raises(ConfigError, match=said):
            runner.invoke(cli, ["review", "--pr", url, "--post"], catch_exceptions=False)
    assert github.reviews == []


def test_a_new_head_is_reviewed_from_the_last_one_the_host_shows(
    on_github: FakeGitHub, engine: Engine, fake_openai: FakeOpenAI
) -> None:
    """Each CI job may start with no review rows: the markers on the PR are the state."""
    github = on_github
    review("--pr", pull_url(github), "--post")
    first = github.pulls[7].head
    forget_every_review(engine)
    github.repo.write("shop/notes.py", "def note(text):\n    return text.strip()\n")
    github.pulls[7].head = github.repo.commit("Notes")
    ran = review("--pr", pull_url(github), "--post")
    assert ran["outcomes"]["review"] == "posted" and len(github.reviews) == 2
    assert ("GET", f"/repos/{GITHUB_REPO}/compare/{first}...{github.pulls[7].head}") in (
        github.requests
    )
    # the finding of the first review is not posted again on the second
    assert github.reviews[1]["comments"] == []


def test_a_review_whose_answer_was_lost_is_not_posted_again(on_github: FakeGitHub) -> None:
    github = on_github
    github.fail_next("POST", "/pulls/7/reviews", [502], apply=True)
    failed = runner.invoke(cli, ["review", "--pr", pull_url(github), "--post"])
    assert failed.exit_code != 0 and len(github.reviews) == 1  # GitHub has it
    assert github.check_runs[-1]["conclusion"] == "cancelled"  # a failed review is never green
    rerun = review("--pr", pull_url(github), "--post")
    assert rerun["outcomes"]["review"] == "reconciled"
    assert len(github.reviews) == 1
    # the gate is set from the review GitHub has, not left as the failed run left it
    assert github.check_runs[-1]["conclusion"] == "failure"


def test_a_token_that_cannot_write_is_refused_before_anything_is_posted(
    on_github: FakeGitHub,
) -> None:
    github = on_github
    github.accept_token(TOKEN, read_only=True)
    with pytest.raises(ConfigError, match=r"GITHUB_TOKEN may not do this .*pull-requests: write"):
        runner.invoke(cli, ["review", "--pr", pull_url(github), "--post"], catch_exceptions=False)
    assert github.reviews == [] and github.check_runs == [] and github.comments == []
    # it can still print the review
    assert review("--pr", pull_url(github))["review"] is not None


def forget_every_review(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM reviews"))


def run_cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        env=clean_env(**env) | {"PATH": f"{os.environ['PATH']}:/usr/sbin:/sbin"},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_each_bad_input_is_one_error_line_exit_1_and_nothing_posted(
    github: FakeGitHub, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """As the process a CI job runs: one `error:` line naming the fix, exit 1."""
    fake_openai.chat_reply = review_reply
    github.accept_token(TOKEN)
    github.accept_token("ghs_readonly0123456789", read_only=True)
    cache = tmp_path / "cache"
    env = {
        "GITHUB_API_URL": github.base_url,
        "GITHUB_TOKEN": TOKEN,
        "OPENAI_BASE_URL": fake_openai.base_url,
        "OPENAI_API_KEY": "sk-test-0123456789abcdef",
    }
    cache.mkdir()
    write_stamp(cache, "acme/other", "0001")
    (cache / "pgdata-18").mkdir()
    cases = [
        ({}, "https://bitbucket.org/acme/shop/pull-requests/7", "not a pull request URL"),
        ({}, pull_url(github, 404), "no pull request 404 in acme/shop"),
        ({"GITHUB_TOKEN": "ghs_readonly0123456789"}, pull_url(github), "pull-requests: write"),
        ({"GITHUB_TOKEN": "ghs_unknown0123456789"}, pull_url(github), "refused GITHUB_TOKEN"),
        ({"GITHUB_TOKEN": ""}, pull_url(github), "GITHUB_TOKEN is not set"),
    ]
    for extra, url, said in cases:
        done = run_cli(
            env | extra,
            tmp_path,
            "review",
            "--pr",
            url,
            "--post",
            "--index-cache",
            str(cache / ".." / "fresh"),
        )
        assert done.returncode == 1, (url, done.stderr)
        line = done.stderr.strip().splitlines()[-1]  # after the progress logged
        assert line.startswith("error: ") and said in line, line
        assert "Traceback" not in done.stderr
    done = run_cli(
        env, tmp_path, "review", "--pr", pull_url(github), "--post", "--index-cache", str(cache)
    )
    [line] = done.stderr.strip().splitlines()  # refused before anything is done
    assert done.returncode == 1 and "made for acme/other" in line and "key the CI cache" in line
    assert github.reviews == [] and github.check_runs == [] and github.comments == []
    assert TOKEN not in done.stderr


def test_a_cache_whose_database_will_not_start_is_rebuilt(
    github: FakeGitHub, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.chat_reply = review_reply
    github.accept_token(TOKEN)
    cache = tmp_path / "cache"
    (cache / "pgdata-18").mkdir(parents=True)
    (cache / "pgdata-18" / "PG_VERSION").write_text("garbage\n")
    write_stamp(cache, GITHUB_REPO, head_revision() or "")
    env = {
        "GITHUB_API_URL": github.base_url,
        "GITHUB_TOKEN": TOKEN,
        "OPENAI_BASE_URL": fake_openai.base_url,
        "OPENAI_API_KEY": "sk-test-0123456789abcdef",
    }
    done = run_cli(
        env, tmp_path, "review", "--pr", pull_url(github), "--post", "--index-cache", str(cache)
    )
    assert done.returncode == 0, done.stderr
    assert "action=ci.cache_rebuilt" in done.stderr
    assert len(github.reviews) == 1


def test_local_and_pull_request_options_do_not_mix(on_github: FakeGitHub) -> None:
    for args, said in (
        (["--pr", pull_url(on_github), "--base", "HEAD~1"], "not for --pr"),
        (["--post"], "are for --pr URL"),
    ):
        with pytest.raises(ConfigError, match=said):
            runner.invoke(cli, ["review", *args], catch_exceptions=False)
    assert on_github.reviews == []
