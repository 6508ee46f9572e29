"""Failure paths of what the bot does on a PR beside the review: the description update
failing at GitHub, a label GitHub refuses, a thread that cannot be resolved; and
``/help``."""

from __future__ import annotations

import logging

import pytest

from app.flows.commands import run_command
from app.flows.describe import describe_pull_request
from app.flows.review import review_pull_request
from app.github.client import GitHubError
from app.jobs.retry import is_transient
from app.runtime import Runtime
from tests.conftest import GITHUB_INSTALLATION, GITHUB_REPO
from tests.fakes.github_server import FakeGitHub
from tests.fakes.openai_server import CHAT, FakeOpenAI, summaries_for
from tests.shop_repo import CHECKOUT_V2, review_reply

DESCRIPTION = (
    '{"title": "Coupons", "type": "feature", "summary": "Applies coupons.",'
    ' "walkthrough": [], "labels": ["feature"]}'
)


def _describing(body: dict[str, object]) -> str:
    messages = body["messages"]  # type: ignore[index]
    if "writing the description" in messages[0]["content"]:  # type: ignore[index]
        return DESCRIPTION
    if "Earlier you left a review comment" in messages[0]["content"]:  # type: ignore[index]
        return '{"still_applies": false, "why": "It uses the percent now."}'
    prompt = messages[-1]["content"]  # type: ignore[index]
    return summaries_for(prompt) if "### chunk" in prompt else review_reply(body)  # type: ignore[arg-type]


def test_a_502_on_the_description_update_is_retried_and_loses_nothing(
    run: Runtime, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = _describing
    github.fail_next("PATCH", "/pulls/7", [502])
    with pytest.raises(GitHubError) as failed:
        describe_pull_request(run, GITHUB_REPO, GITHUB_INSTALLATION, 7, asked=True, job_id=77)
    assert failed.value.status == 502 and is_transient(failed.value)  # the job retries it
    assert github.pulls[7].body == "Uses the discount helper from pricing."
    retried = describe_pull_request(run, GITHUB_REPO, GITHUB_INSTALLATION, 7, True, job_id=77)
    assert retried == "described"
    assert github.pulls[7].body.startswith("Uses the discount helper from pricing.\n\n")
    assert "Applies coupons." in github.pulls[7].body
    # the retry (job 77 again) reused the description its first attempt paid for
    described = [
        b
        for b in fake_openai.bodies(CHAT)
        if "writing the description" in b["messages"][0]["content"]
    ]
    assert len(described) == 1


def test_a_label_github_refuses_leaves_the_description(
    run: Runtime, github: FakeGitHub, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake_openai.chat_reply = _describing
    github.labels = ["feature"]
    github.repo.write(".reviewbot.toml", "[review]\nlabels = true\n").commit("Labels on")
    github.fail_next("POST", "/issues/7/labels", [422])  # deleted between listing and adding
    assert describe_pull_request(run, GITHUB_REPO, GITHUB_INSTALLATION, 7, asked=True) == (
        "described"
    )
    assert "Applies coupons." in github.pulls[7].body and github.pulls[7].labels == []
    assert any("describe.labels_refused" in r.getMessage() for r in caplog.records)


def test_describe_off_unless_asked(run: Runtime, github: FakeGitHub) -> None:
    assert describe_pull_request(run, GITHUB_REPO, GITHUB_INSTALLATION, 7) == "off"
    assert github.pulls[7].body == "Uses the discount helper from pricing."


def test_a_failed_resolve_leaves_the_thread_open_and_the_review_posted(
    run: Runtime, github: FakeGitHub, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    fake_openai.chat_reply = _describing
    assert review_pull_request(run, GITHUB_REPO, GITHUB_INSTALLATION, 7) == "posted"
    [first] = github.review_comments
    repo = github.repo
    repo.write("shop/checkout.py", CHECKOUT_V2.replace("coupon.fraction", "coupon.percent"))
    github.pulls[7].head = repo.commit("Use the percent")
    github.mutations_fail = True
    assert review_pull_request(run, GITHUB_REPO, GITHUB_INSTALLATION, 7) == "posted"
    assert len(github.reviews) == 2 and github.resolved_threads == set()
    refused = [r.getMessage() for r in caplog.records if "thread.not_resolved" in r.getMessage()]
    assert refused and f"comment={first['id']}" in refused[0]

    def replies() -> list[str]:
        return [c["body"] for c in github.review_comments if c.get("in_reply_to_id") == first["id"]]

    # the reply says what happened: not "Resolving" under a thread that stayed open
    [said] = replies()
    assert "could not be resolved automatically" in said and "Resolved this thread" not in said
    repo.write("shop/notes.py", "def note():\n    return 1\n")
    github.pulls[7].head = repo.commit("Notes")
    review_pull_request(run, GITHUB_REPO, GITHUB_INSTALLATION, 7)  # refused again
    assert len(replies()) == 1  # said once
    github.mutations_fail = False  # the next push resolves it, and says so once
    repo.write("shop/notes.py", "def note():\n    return 2\n")
    github.pulls[7].head = repo.commit("Notes again")
    review_pull_request(run, GITHUB_REPO, GITHUB_INSTALLATION, 7)
    assert github.resolved_threads == {first["id"]}
    assert len(replies()) == 2 and "Resolved this thread." in replies()[1]


def test_help_lists_the_commands_and_the_effective_settings_once(
    run: Runtime, github: FakeGitHub
) -> None:
    github.repo.write(".reviewbot.toml", '[review]\ngate = "major"\n').commit("Gate")
    assert run_command(run, GITHUB_REPO, GITHUB_INSTALLATION, 7, "help", "anyone", 31) == (
        "answered"
    )
    assert run_command(run, GITHUB_REPO, GITHUB_INSTALLATION, 7, "help", "anyone", 31) == (
        "already answered"
    )
    [said] = github.comments
    assert "`/describe`" in said["body"] and "| `gate` | `major` |" in said["body"]
    assert "| `ignore_authors` | `*[bot]," in said["body"]
