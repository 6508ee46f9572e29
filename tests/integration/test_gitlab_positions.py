"""Multi-line findings on GitLab, against a fake GitLab that checks each ``line_range``
end's line code as GitLab computes it: a finding over several lines covers them all,
not only its last line."""

from __future__ import annotations

import hashlib

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine

from app.config import Settings
from app.flows.review import review_pull_request
from app.forge.models import InlineComment
from app.gitlab.client import GitLabClient, GitLabError
from app.gitlab.project import ProjectApi
from app.gitlab.records import repo_key
from app.runtime import Runtime
from tests.conftest import GITLAB_PROJECT, GITLAB_PROJECT_ID, GITLAB_TOKEN
from tests.fakes.gitlab_server import FakeGitLab
from tests.fakes.openai_server import FakeOpenAI
from tests.support.models import finding, model


def test_a_finding_over_several_lines_gets_a_line_range(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = model([finding(8, start_line=6)])
    run = Runtime(gitlab_settings, engine)
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    assert review_pull_request(run, repo, GITLAB_PROJECT_ID, 7) == "posted"
    [thread] = gitlab.diff_threads(7)
    position = thread["notes"][0]["position"]
    assert position["new_line"] == 8
    span = position["line_range"]
    assert (span["start"]["new_line"], span["end"]["new_line"]) == (6, 8)
    digest = hashlib.sha1(b"shop/checkout.py").hexdigest()
    assert span["start"]["line_code"].startswith(digest + "_")
    assert gitlab.refused == []  # every line code is the one GitLab computes


def test_the_fake_refuses_a_line_range_gitlab_would_refuse(gitlab: FakeGitLab) -> None:
    """The check above can fail: a range whose line code is not GitLab's is a 400."""
    client = GitLabClient(gitlab.base_url, SecretStr(GITLAB_TOKEN), max_wait=0.01)
    project = ProjectApi(client, GITLAB_PROJECT_ID, GITLAB_PROJECT)
    refs = project._get("/merge_requests/7")["diff_refs"]
    [place] = project._positions(7, refs, [InlineComment("shop/checkout.py", 8, "RIGHT", "x", 6)])
    place["line_range"]["start"]["line_code"] = "0" * 40 + "_1_1"
    with pytest.raises(GitLabError) as refused:
        project._discuss(7, "x", place)
    assert refused.value.status == 400 and gitlab.diff_threads(7) == []
