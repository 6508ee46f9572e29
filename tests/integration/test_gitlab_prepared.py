"""A merge request read before GitLab has prepared it (``prepared_at`` and ``diff_refs``
null, ``/diffs`` empty, just after it is opened), against the fake GitLab: the review
waits for it, and a head is never marked reviewed from a diff GitLab had not made."""

from __future__ import annotations

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine, text

from app.config import Settings
from app.flows.review import review_pull_request
from app.gitlab.client import GitLabClient, GitLabError
from app.gitlab.project import ProjectApi
from app.gitlab.records import repo_key
from app.jobs.retry import is_transient
from app.runtime import Runtime
from tests.conftest import GITLAB_PROJECT, GITLAB_PROJECT_ID, GITLAB_TOKEN
from tests.fakes.gitlab_server import FakeGitLab


def test_the_review_waits_until_gitlab_has_prepared_the_merge_request(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    gitlab.mrs[7].unprepared_reads = 2
    run = Runtime(gitlab_settings, engine)
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    assert review_pull_request(run, repo, GITLAB_PROJECT_ID, 7) == "posted"
    [thread] = gitlab.diff_threads(7)
    position = thread["notes"][0]["position"]
    assert position["head_sha"] == gitlab.mrs[7].head and position["base_sha"]


def test_a_merge_request_never_prepared_is_retried_later_and_not_marked_reviewed(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    gitlab.mrs[7].unprepared_reads = 1000
    client = GitLabClient(gitlab.base_url, SecretStr(GITLAB_TOKEN), max_wait=0.01)
    project = ProjectApi(client, GITLAB_PROJECT_ID, GITLAB_PROJECT, prepare_waits=(0.01, 0.01))
    with pytest.raises(GitLabError, match="not prepared merge request !7") as raised:
        project.pull(7)
    assert is_transient(raised.value)  # the job tries again, later
    run = Runtime(gitlab_settings, engine)
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    with pytest.raises(GitLabError):
        review_pull_request(run, repo, GITLAB_PROJECT_ID, 7)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM reviews")).scalar_one() == 0
    assert gitlab.summaries(7) == [] and gitlab.statuses == []
