"""The GitLab adapter against the fake GitLab: reading a project, comparing commits,
streaming archives under the cap, retrying reads but never writes, and errors that
name the call but never the token."""

from __future__ import annotations

import io
import json

import pytest
from pydantic import SecretStr

from app.config import load_settings
from app.errors import ConfigError
from app.forge.protocol import ForgeError
from app.gitlab.checks import gitlab_checks
from app.gitlab.client import GitLabClient, GitLabError
from app.gitlab.host import GitLabHost
from app.gitlab.project import ProjectApi
from app.gitlab.records import repo_key
from app.indexing.archive import ArchiveTooLarge
from tests.conftest import GITLAB_PROJECT, GITLAB_PROJECT_ID, GITLAB_TOKEN
from tests.fakes.gitlab_server import FakeGitLab


@pytest.fixture
def project(gitlab: FakeGitLab) -> ProjectApi:
    client = GitLabClient(gitlab.base_url, SecretStr(GITLAB_TOKEN), max_wait=0.01)
    return ProjectApi(client, GITLAB_PROJECT_ID, GITLAB_PROJECT)


def test_reading_the_project_and_its_merge_request(project: ProjectApi, gitlab: FakeGitLab) -> None:
    mr = gitlab.mrs[7]
    pr = project.pull(7)
    assert (pr.head_sha, pr.state, pr.author, pr.base_ref) == (mr.head, "open", "alice", "main")
    assert project.default_branch() == "main"
    assert b"+        total = apply_discount" in project.pull_diff(7)
    assert project.content("shop/pricing.py", mr.head).startswith(b'"""Prices')  # type: ignore[union-attr]
    assert project.content("no/such.py", mr.head) is None
    assert project.commit_sha("main") == mr.head
    assert project.permission("alice") == "write" and project.permission("carol") == "none"


def test_comparisons_say_how_two_commits_stand(project: ProjectApi, gitlab: FakeGitLab) -> None:
    base, head = gitlab.mrs[7].base, gitlab.mrs[7].head
    ahead = project.compare(base, head)
    assert ahead is not None and ahead.status == "ahead"
    assert [(f.path, f.status) for f in ahead.files] == [("shop/checkout.py", "modified")]
    behind = project.compare(head, base)
    assert behind is not None and behind.status == "behind"
    assert project.compare(head, head) == project.compare(base, base)  # identical, no files
    assert project.compare(base, "f" * 40) is None  # a commit GitLab does not have


def test_the_archive_is_streamed_under_the_cap(project: ProjectApi, gitlab: FakeGitLab) -> None:
    into = io.BytesIO()
    written = project.download_tarball(gitlab.mrs[7].head, into, max_bytes=10_000_000)
    assert written == len(into.getvalue()) > 1000 and into.getvalue()[:2] == b"\x1f\x8b"
    with pytest.raises(ArchiveTooLarge, match="larger than 1000 bytes"):
        project.download_tarball(gitlab.mrs[7].head, io.BytesIO(), max_bytes=1000)


def test_reads_are_retried_writes_are_not_and_errors_hide_the_token(
    project: ProjectApi, gitlab: FakeGitLab
) -> None:
    gitlab.fail_next("GET", "/merge_requests/7", [502, 503])
    assert project.pull(7).number == 7  # two 5xx, then the answer
    gitlab.fail_next("POST", "/merge_requests/7/notes", [502])
    with pytest.raises(GitLabError) as failed:
        project.comment(7, "hello")
    assert failed.value.status == 502 and isinstance(failed.value, ForgeError)
    assert "POST /projects/15/merge_requests/7/notes" in str(failed.value)
    assert GITLAB_TOKEN not in str(failed.value)
    assert gitlab.summaries(7) == []  # not retried: a write GitLab may have applied
    wrong = ProjectApi(
        GitLabClient(gitlab.base_url, SecretStr("glpat-wrong-000000")), GITLAB_PROJECT_ID, "x/y"
    )
    with pytest.raises(GitLabError) as refused:
        wrong.pull(7)
    assert refused.value.status == 401 and "glpat" not in str(refused.value)


def test_a_reply_needs_a_discussion_that_holds_the_note(project: ProjectApi) -> None:
    with pytest.raises(GitLabError) as missing:
        project.reply(7, 424242, "hello")
    assert missing.value.status == 404


def test_project_tokens_by_path_without_a_default_token(
    gitlab: FakeGitLab, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITLAB_TOKENS", json.dumps({"acme": GITLAB_TOKEN}))
    monkeypatch.setenv("GITLAB_URL", gitlab.base_url)
    monkeypatch.delenv("GITLAB_TOKEN", raising=False)
    settings = load_settings()
    assert settings.gitlab_token is None and GITLAB_TOKEN not in repr(settings)
    host = GitLabHost(settings)
    key = repo_key(gitlab.base_url, GITLAB_PROJECT)
    assert host.repository(GITLAB_PROJECT_ID, key).pull(7).number == 7
    with pytest.raises(ConfigError, match="no GitLab token for other/app"):
        host.repository(16, repo_key(gitlab.base_url, "other/app"))
    checks = [c() for c in gitlab_checks(settings)]
    assert [(c.name, c.ok) for c in checks] == [
        ("GitLab (acme)", True),
        ("GitLab webhooks", False),
        ("GitLab project acme", True),  # a group's path: no project to check
    ]
    assert "not a project" in checks[-1].detail
