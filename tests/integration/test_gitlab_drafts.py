"""A review on GitLab as one batch: its comments and summary as draft notes, published
together, so the MR's participants get one notification, as for a GitHub review;
against a fake GitLab with the Draft Notes API (and without it, as older instances)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from app.config import Settings
from app.flows.review import review_pull_request
from app.gitlab.client import GitLabError
from app.gitlab.records import repo_key
from app.runtime import Runtime
from tests.conftest import GITLAB_PROJECT, GITLAB_PROJECT_ID
from tests.fakes.gitlab_server import FakeGitLab
from tests.fakes.openai_server import FakeOpenAI
from tests.support.models import finding, model


@pytest.fixture
def gitlab_run(gitlab_settings: Settings, engine: Engine, fake_openai: FakeOpenAI) -> Runtime:
    fake_openai.chat_reply = model([finding(7), finding(8, severity="minor")])
    return Runtime(gitlab_settings, engine)


def review(gitlab_run: Runtime, gitlab: FakeGitLab) -> str:
    return review_pull_request(
        gitlab_run, repo_key(gitlab.base_url, GITLAB_PROJECT), GITLAB_PROJECT_ID, 7
    )


def test_a_review_is_published_at_once_with_one_notification(
    gitlab_run: Runtime, gitlab: FakeGitLab
) -> None:
    assert review(gitlab_run, gitlab) == "posted"
    assert len(gitlab.diff_threads(7)) == 2 and len(gitlab.summaries(7)) == 1
    assert gitlab.notifications == 1  # was one per comment and one for the summary
    assert gitlab.drafts == []


def test_without_the_draft_notes_api_each_note_is_posted(
    gitlab_run: Runtime, gitlab: FakeGitLab
) -> None:
    gitlab.drafts_supported = False
    assert review(gitlab_run, gitlab) == "posted"
    assert len(gitlab.diff_threads(7)) == 2 and len(gitlab.summaries(7)) == 1
    assert gitlab.notifications == 3


def test_drafts_a_dead_attempt_left_are_dropped_and_the_review_published_once(
    gitlab_run: Runtime, gitlab: FakeGitLab
) -> None:
    gitlab.fail_next("POST", "/merge_requests/7/draft_notes/bulk_publish", [502])
    with pytest.raises(GitLabError, match="502"):
        review(gitlab_run, gitlab)
    assert len(gitlab.drafts) == 3 and gitlab.summaries(7) == []  # nothing published
    assert review(gitlab_run, gitlab) == "posted"
    assert len(gitlab.diff_threads(7)) == 2 and len(gitlab.summaries(7)) == 1
    assert gitlab.drafts == [] and gitlab.notifications == 1


def test_a_refused_position_leaves_no_draft_and_the_comments_move_to_the_summary(
    gitlab_run: Runtime, gitlab: FakeGitLab
) -> None:
    gitlab.refuse_discussions_after = 1  # GitLab refuses the second comment's position
    assert review(gitlab_run, gitlab) == "posted"
    assert gitlab.diff_threads(7) == [] and gitlab.drafts == []
    [summary] = gitlab.summaries(7)
    assert "Finding on line seven" in summary["body"] and "Finding on line eight" in summary["body"]
