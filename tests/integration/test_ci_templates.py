"""The GitHub Action and the GitLab job as their runners run them: ``action.yml``'s
review step with the inputs of the README's workflow, the variables the runner sets and
GitHub's real event payloads, against the fake GitHub; the GitLab job's script with
GitLab's predefined variables against the fake GitLab. The Action's metadata and the
workflow are checked against SchemaStore's published schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import GITHUB_REPO, GITLAB_TOKEN
from tests.fakes.github_server import FakeGitHub
from tests.fakes.gitlab_server import FakeGitLab
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.gitrepo import GitRepo
from tests.shop_repo import review_reply
from tests.support.ci import (
    ACTION,
    GITLAB_JOB,
    WORKFLOW,
    load,
    run_action_step,
    run_gitlab_script,
    workflow_inputs,
)
from tests.webhooks import payload

SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "schemas"
TOKEN = "ghs_actions0123456789"


def test_the_action_and_the_workflow_are_valid_by_the_published_schemas() -> None:
    for document, schema in ((ACTION, "github-action.json"), (WORKFLOW, "github-workflow.json")):
        jsonschema.validate(load(document), json.loads((SCHEMAS / schema).read_text()))


def test_the_workflow_asks_for_the_least_it_needs() -> None:
    workflow = load(WORKFLOW)
    assert workflow["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "checks": "write",
        "issues": "write",
    }
    assert "group" in workflow["concurrency"]
    assert set(workflow["on"]) == {
        "pull_request",
        "pull_request_target",
        "issue_comment",
        "pull_request_review_comment",
        "push",
    }
    declared = set(load(ACTION)["inputs"])
    assert set(workflow_inputs()) <= declared
    # a fork's run checks out the base, never the fork's head
    [checkout] = [s for s in workflow["jobs"]["review"]["steps"] if "checkout" in s["uses"]]
    assert "pull_request.base.sha" in checkout["with"]["ref"]
    assert "head" not in checkout["with"]["ref"]


@pytest.fixture
def actions(github: FakeGitHub, fake_openai: FakeOpenAI, tmp_path: Path) -> dict[str, Any]:
    """What the runner gives a job: its variables, a temp folder, the output file."""
    fake_openai.chat_reply = review_reply
    github.accept_token(TOKEN)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    output = tmp_path / "github-output"
    output.touch()
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": GITHUB_REPO,
        "GITHUB_API_URL": github.base_url,
        "GITHUB_SERVER_URL": github.base_url,
        "GITHUB_OUTPUT": str(output),
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_WORKSPACE": str(tmp_path),
    }
    inputs = workflow_inputs() | {
        "openai-base-url": fake_openai.base_url,
        "openai-api-key": "sk-test-0123456789abcdef",
        "gate": "minor",
    }
    return {"env": env, "temp": temp, "output": output, "inputs": inputs}


def run_event(
    actions: dict[str, Any], tmp_path: Path, event: str, data: dict[str, Any], cwd: Path
) -> str:
    path = tmp_path / f"{event}.json"
    path.write_text(json.dumps(data))
    env = actions["env"] | {"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": str(path)}
    done = run_action_step("review", actions["inputs"], env, cwd, actions["temp"])
    assert done.returncode == 0, done.stderr
    return done.stderr


def pr_payload(event: str, action: str) -> dict[str, Any]:
    data = payload(f"pull_request.{action}", **{"repository.full_name": GITHUB_REPO})
    data["pull_request"]["number"] = data["number"] = 7
    data.pop("installation", None)  # Actions' payloads name no installation
    return data


def outputs(actions: dict[str, Any]) -> dict[str, Any]:
    text = actions["output"].read_text()
    name, _, rest = text.partition("<<")
    delimiter, _, body = rest.partition("\n")
    assert name == "review"
    return dict(json.loads(body[: body.rindex(delimiter)]))


def test_an_opened_pull_request_is_reviewed_once_and_the_index_is_cached(
    actions: dict[str, Any], github: FakeGitHub, tmp_path: Path
) -> None:
    event = pr_payload("pull_request", "opened")
    run_event(actions, tmp_path, "pull_request", event, tmp_path)
    [review] = github.reviews
    assert len(review["comments"]) == 1 and "| `shop/checkout.py` |" in review["body"]
    assert github.check_runs[-1]["conclusion"] == "failure"
    said = outputs(actions)
    assert said["outcomes"]["review"] == "posted" and said["posted"] is True
    stamp = json.loads((actions["temp"] / "reviewbot-index" / "reviewbot-cache.json").read_text())
    assert stamp["repository"] == GITHUB_REPO
    # the cache's server keeps little log: what the CI saves is the index
    conf = (actions["temp"] / "reviewbot-index" / "pgdata-18" / "postgresql.auto.conf").read_text()
    assert "max_wal_size = '32MB'" in conf

    tarballs = sum(1 for _, p in github.requests if "/tarball/" in p)
    run_event(actions, tmp_path, "pull_request", event, tmp_path)  # a rerun of the job
    assert len(github.reviews) == 1
    assert sum(1 for _, p in github.requests if "/tarball/" in p) == tarballs  # cached


def test_a_command_comment_runs_the_command(
    actions: dict[str, Any], github: FakeGitHub, tmp_path: Path
) -> None:
    github.permissions["maintainer"] = "write"
    event = payload(
        "issue_comment.created",
        **{
            "repository.full_name": GITHUB_REPO,
            "issue.number": 7,
            "issue.pull_request": {"url": "x"},
            "comment.id": 501,
            "comment.body": "/help",
            "comment.user.login": "maintainer",
            "comment.user.type": "User",
        },
    )
    event.pop("installation", None)
    run_event(actions, tmp_path, "issue_comment", event, tmp_path)
    [answer] = github.comments
    assert "/review" in answer["body"] and "reviewbot:help=501" in answer["body"]


def test_a_forks_pull_request_target_run_reads_the_fork_through_the_api(
    actions: dict[str, Any], github: FakeGitHub, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """The job checked out the base; the fork's head is not in the clone. What the fork
    changed is read from GitHub, never from the work tree."""
    base = github.pulls[7].base
    github.repo.git("branch", "base-only", base)
    clone = GitRepo(tmp_path / "checkout")
    clone.git("fetch", "-q", str(github.repo.root), "base-only")
    clone.git("reset", "-q", "--hard", "FETCH_HEAD")
    checkout = clone.root
    (checkout / "shop" / "checkout.py").write_text("WORK_TREE_ONLY = 1\n")
    event = pr_payload("pull_request", "opened")
    event["pull_request"]["head"]["repo"]["full_name"] = "forker/shop"
    run_event(actions, tmp_path, "pull_request_target", event, checkout)
    assert len(github.reviews) == 1
    prompts = [json.dumps(b) for b in fake_openai.bodies(CHAT)]
    assert prompts and not any("WORK_TREE_ONLY" in p for p in prompts)
    assert any("coupon" in p for p in prompts)  # the fork's change, as GitHub has it
    assert ("GET", f"/repos/{GITHUB_REPO}/contents/shop/checkout.py") in github.requests
    # the base was indexed from the clone: no archive was downloaded
    assert not any("/tarball/" in p for _, p in github.requests)


def test_the_gitlab_job_reviews_its_merge_request_once(
    gitlab: FakeGitLab, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """The job's script with GitLab's predefined variables, in a clone at the MR's head
    (as the runner checks it out), against the fake GitLab."""
    fake_openai.chat_reply = review_reply
    job = load(GITLAB_JOB)["reviewbot"]
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    project_dir = GitRepo(tmp_path / "builds" / "acme" / "shop")
    project_dir.git("fetch", "-q", str(gitlab.repo.root), "main")
    project_dir.git("reset", "-q", "--hard", "FETCH_HEAD")
    variables = {
        "CI_SERVER_URL": gitlab.base_url,
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_MERGE_REQUEST_IID": "7",
        "CI_MERGE_REQUEST_PROJECT_ID": "15",
        "CI_MERGE_REQUEST_PROJECT_URL": f"{gitlab.base_url}/acme/shop",
        "CI_COMMIT_SHA": gitlab.mrs[7].head,
        "CI_PROJECT_DIR": str(project_dir.root),
        "GITLAB_TOKEN": GITLAB_TOKEN,
        "OPENAI_BASE_URL": fake_openai.base_url,
        "OPENAI_API_KEY": "sk-test-0123456789abcdef",
    }
    for _ in range(2):  # a retried job posts nothing twice
        done = run_gitlab_script(variables, project_dir.root)
        assert done.returncode == 0, done.stderr
    assert len(gitlab.diff_threads(7)) == 1
    assert len(gitlab.summaries(7)) == 1
    report = json.loads((project_dir.root / "reviewbot.json").read_text())
    assert report["outcomes"]["review"] == "reconciled" and report["posted"] is True
    assert (project_dir.root / ".reviewbot-index" / "reviewbot-cache.json").is_file()


def test_a_push_to_the_default_branch_indexes_it_for_the_cache(
    actions: dict[str, Any], github: FakeGitHub, tmp_path: Path
) -> None:
    event = payload(
        "push",
        **{
            "repository.full_name": GITHUB_REPO,
            "repository.default_branch": "main",
            "ref": "refs/heads/main",
            "deleted": False,
        },
    )
    event.pop("installation", None)
    run_event(actions, tmp_path, "push", event, tmp_path)
    assert outputs(actions)["outcomes"] == {"index": "indexed (17 files changed)"}
    assert github.reviews == [] and github.check_runs == []
    assert (actions["temp"] / "reviewbot-index" / "reviewbot-cache.json").is_file()
