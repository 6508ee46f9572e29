"""Findings a tool can prove, end to end through a webhook on the fake GitHub and the fake
GitLab: a pull request adding an unquoted variable in a shell script, an undefined name
in Python, an unpinned apt-get install in a Dockerfile, a duplicated YAML key and a
cloud key gets each posted once, on its line, naming its tool and rule, beside the
model's own finding; a second delivery of the same head posts nothing again."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from app.config import Settings
from tests.fakes.github_server import FakeGitHub
from tests.fakes.gitlab_server import FakeGitLab
from tests.gitrepo import GitRepo
from tests.support.app import jobs_left, pr_event, send, serving, wait_for
from tests.support.gitlab import MR_HOOK, mr_event, send_gitlab

DATA = Path(__file__).parent.parent / "data" / "tools"
#: (path, line, tool and rule as the comment names them)
SEEDED = [
    ("shop/tax.py", 2, "ruff F821"),
    ("deploy.sh", 3, "shellcheck SC2086"),
    ("Dockerfile", 2, "hadolint DL3008"),
    ("config/app.yaml", 2, "yamllint key-duplicates"),
    ("settings/keys.txt", 1, "detect-secrets AWS Access Key"),
]


def seed(repo: GitRepo) -> str:
    """The seeded files, committed on top of the pull request's head."""
    repo.write("shop/tax.py", "def tax(total):\n    return total * rate\n")
    repo.write("deploy.sh", (DATA / "src-deploy.sh.txt").read_text())
    repo.write("Dockerfile", (DATA / "src-Dockerfile.txt").read_text())
    repo.write("config/app.yaml", "a: 1\na: 2\n")
    repo.write("settings/keys.txt", 'AWS_KEY = "AKIAIOSFODNN7EXAMPLE"\n')
    return repo.commit("Add tax, deployment and settings")


def posted(comments: list[tuple[str, int, str]]) -> None:
    """Each seeded finding once, on its line, with its tool and rule."""
    for path, line, rule in SEEDED:
        on_it = [c for c in comments if (c[0], c[1]) == (path, line) and rule in c[2]]
        assert len(on_it) == 1, (path, line, rule, comments)
    assert any(c[0] == "shop/checkout.py" for c in comments)  # the model's own finding


def test_seeded_findings_are_posted_once_on_github(
    github_settings: Settings, engine: Engine, github: FakeGitHub
) -> None:
    head = seed(github.repo)
    github.pulls[7].head = head
    settings = github_settings.model_copy(update={"max_review_comments": 30})
    with serving(settings, engine, worker=True) as base:
        assert send(base, "pull_request", pr_event("opened", head)).status_code == 202
        wait_for(lambda: len(github.reviews) == 1)
        assert send(base, "pull_request", pr_event("synchronize", head)).status_code == 202
        wait_for(lambda: jobs_left(engine) == 0)
    [review] = github.reviews
    posted([(c["path"], c["line"], c["body"]) for c in review["comments"]])
    shellcheck = next(c for c in review["comments"] if c["path"] == "deploy.sh")
    assert '```suggestion\nrm -rf "$name"/tmp\n```' in shellcheck["body"]
    assert "https://www.shellcheck.net/wiki/SC2086" in shellcheck["body"]
    assert "AKIA" not in review["body"] and "Checked by tools" in review["body"]


def test_seeded_findings_are_posted_once_on_gitlab(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    head = seed(gitlab.repo)
    gitlab.mrs[7].head = head
    settings = gitlab_settings.model_copy(update={"max_review_comments": 30})
    with serving(settings, engine, worker=True) as base:
        assert send_gitlab(base, MR_HOOK, mr_event("open", head)).status_code == 202
        wait_for(lambda: len(gitlab.summaries(7)) == 1)
        reopened = mr_event("reopen", head)
        assert send_gitlab(base, MR_HOOK, reopened).status_code in (200, 202)
        wait_for(lambda: jobs_left(engine) == 0)
    notes = [t["notes"][0] for t in gitlab.diff_threads(7)]
    posted([(n["position"]["new_path"], n["position"]["new_line"], n["body"]) for n in notes])
    assert len(gitlab.summaries(7)) == 1
