"""The CI mode's pure parts: which pull request a URL names, the heads the bot's
reviews carry, the jobs an Actions event asks for, and the checks of a restored cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.ci.actions import ActionEvent, event_jobs
from app.ci.cache import STAMP, check_cache, write_stamp
from app.ci.target import HostKind, parse_pull_url
from app.db.embedded import PGDATA_DIRNAME
from app.errors import ConfigError
from app.flows.posted_reviews import marked_heads, marker
from app.task_specs import TaskName
from tests.webhooks import payload

GITHUB_API = "https://api.github.com"
GITLAB = "https://gitlab.com"


@pytest.mark.parametrize(
    ("url", "kind", "host", "repo", "number"),
    [
        ("https://github.com/acme/shop/pull/7", "github", GITHUB_API, "acme/shop", 7),
        ("https://github.com/acme/shop/pull/7/files", "github", GITHUB_API, "acme/shop", 7),
        (
            "https://ghe.example.com/acme/shop/pull/12",
            "github",
            "https://ghe.example.com/api/v3",
            "acme/shop",
            12,
        ),
        (
            "https://gitlab.com/acme/team/shop/-/merge_requests/3",
            "gitlab",
            GITLAB,
            "gitlab.com/acme/team/shop",
            3,
        ),
        (
            "https://git.example.com/acme/shop/-/merge_requests/4/diffs",
            "gitlab",
            "https://git.example.com",
            "git.example.com/acme/shop",
            4,
        ),
    ],
)
def test_a_url_names_its_host_repository_and_number(
    url: str, kind: str, host: str, repo: str, number: int
) -> None:
    target = parse_pull_url(url, GITHUB_API, GITLAB)
    assert (target.kind, target.host_url, target.repo, target.number) == (
        HostKind(kind),
        host,
        repo,
        number,
    )


def test_configured_hosts_keep_their_own_addresses() -> None:
    """A GitLab under a path, a GitHub whose API is where GITHUB_API_URL says."""
    under = parse_pull_url(
        "https://example.com/gitlab/acme/shop/-/merge_requests/5",
        GITHUB_API,
        "https://example.com/gitlab",
    )
    assert (under.host_url, under.repo, under.path) == (
        "https://example.com/gitlab",
        "example.com/gitlab/acme/shop",
        "acme/shop",
    )
    local = parse_pull_url(
        "http://127.0.0.1:8080/acme/shop/pull/7", "http://127.0.0.1:8080", GITLAB
    )
    assert local.host_url == "http://127.0.0.1:8080"


@pytest.mark.parametrize(
    "url",
    [
        "https://bitbucket.org/acme/shop/pull-requests/7",
        "https://github.com/acme/shop",
        "github.com/acme/shop/pull/7",
        "ftp://github.com/acme/shop/pull/7",
        "https://github.com/acme/shop/pull/seven",
    ],
)
def test_anything_else_is_refused_with_the_shapes_it_takes(url: str) -> None:
    with pytest.raises(ConfigError, match=r"not a pull request URL.*github.com/OWNER/REPO/pull/N"):
        parse_pull_url(url, GITHUB_API, GITLAB)


def test_marked_heads_are_found_once_each_newest_last() -> None:
    a, b = "a" * 40, "b" * 40
    bodies = [f"first\n{marker(a)}", "no marker", f"{marker(b)}", f"again {marker(a)}"]
    assert marked_heads(bodies) == [b, a]
    assert marked_heads(["<!-- reviewbot:head=not-a-sha -->"]) == []


def _event(name: str, data: dict[str, object]) -> ActionEvent:
    data = {k: v for k, v in data.items() if k != "installation"}
    return ActionEvent(name, data)


def test_actions_events_ask_for_the_apps_jobs() -> None:
    opened = payload("pull_request.opened", **{"repository.full_name": "acme/shop"})
    jobs = event_jobs(_event("pull_request", opened))
    assert [j.task for j in jobs] == [TaskName.REVIEW, TaskName.DESCRIBE]
    assert jobs[0].args["installation_id"] == 0
    # a fork's pull request under pull_request_target is the same review
    target = event_jobs(_event("pull_request_target", opened))
    assert [j.task for j in target] == [TaskName.REVIEW, TaskName.DESCRIBE]
    closed = payload("pull_request.closed", **{"repository.full_name": "acme/shop"})
    assert event_jobs(_event("pull_request", closed)) == []  # feedback is the App's
    ask = payload(
        "issue_comment.created",
        **{"issue.pull_request": {"url": "x"}, "comment.body": "/ask why?"},
    )
    assert [j.task for j in event_jobs(_event("issue_comment", ask))] == [TaskName.ANSWER_QUESTION]
    reply = payload(
        "pull_request_review_comment.created",
        **{"comment.in_reply_to_id": 41, "comment.body": "Why is this wrong?"},
    )
    [answer] = event_jobs(_event("pull_request_review_comment", reply))
    assert answer.task is TaskName.ANSWER_REPLY and answer.args["parent_id"] == 41
    push = payload(
        "push",
        **{"ref": "refs/heads/main", "repository.default_branch": "main", "deleted": False},
    )
    assert [j.task for j in event_jobs(_event("push", push))] == [TaskName.INDEX]


def test_an_event_payload_github_would_not_send_is_refused() -> None:
    bad = payload("pull_request.opened")
    bad["pull_request"]["number"] = "seven"
    with pytest.raises(ConfigError, match=r"pull_request\.number"):
        event_jobs(_event("pull_request", bad))


REVISIONS = {"0001", "0002"}


def _cache(tmp_path: Path, stamp: str | None) -> Path:
    (tmp_path / PGDATA_DIRNAME).mkdir()
    (tmp_path / PGDATA_DIRNAME / "PG_VERSION").write_text("18\n")
    if stamp is not None:
        (tmp_path / STAMP).write_text(stamp)
    return tmp_path


def test_a_cache_of_this_repository_at_a_known_schema_is_used(tmp_path: Path) -> None:
    write_stamp(_cache(tmp_path, None), "acme/shop", "0002")
    assert check_cache(tmp_path, "acme/shop", REVISIONS) is None
    assert (tmp_path / PGDATA_DIRNAME).is_dir()
    assert check_cache(tmp_path / "empty", "acme/shop", REVISIONS) is None  # a first run


def test_another_repositorys_cache_is_refused_and_kept(tmp_path: Path) -> None:
    write_stamp(_cache(tmp_path, None), "acme/other", "0002")
    with pytest.raises(ConfigError, match=r"made for acme/other, not acme/shop: key the CI cache"):
        check_cache(tmp_path, "acme/shop", REVISIONS)
    assert (tmp_path / PGDATA_DIRNAME).is_dir()


@pytest.mark.parametrize(
    ("stamp", "why"),
    [
        (json.dumps({"format": 1, "repository": "acme/shop", "schema": "0099"}), "schema 0099"),
        ("{not json", "cannot be read"),
        (json.dumps({"format": 2, "repository": "acme/shop", "schema": "0002"}), "cannot be read"),
        (None, "no stamp"),
    ],
)
def test_a_cache_that_cannot_be_trusted_is_removed_to_be_rebuilt(
    tmp_path: Path, stamp: str | None, why: str
) -> None:
    said = check_cache(_cache(tmp_path, stamp), "acme/shop", REVISIONS)
    assert said is not None and why in said
    assert not (tmp_path / PGDATA_DIRNAME).exists() and not (tmp_path / STAMP).exists()


def test_a_merge_request_on_another_instance_uses_that_instances_token() -> None:
    from pydantic import SecretStr

    from app.ci.hosts import token_host
    from app.config import Settings
    from app.gitlab.host import GitLabHost
    from app.gitlab_instances import GitLabInstance

    other = GitLabInstance(url="https://gitlab.example.org", token=SecretStr("glpat-other-1"))
    settings = Settings(gitlab_token=SecretStr("glpat-main-1"), gitlab_instances=[other])
    for url, token in (
        ("https://gitlab.example.org/team/app/-/merge_requests/3", "glpat-other-1"),
        ("https://gitlab.com/team/app/-/merge_requests/3", "glpat-main-1"),
    ):
        target = parse_pull_url(url, "https://api.github.com", settings.gitlab_url)
        host = token_host(settings, target, None).host  # type: ignore[attr-defined]
        assert isinstance(host, GitLabHost)
        assert host._token("team/app").get_secret_value() == token
    alone = Settings(gitlab_instances=[GitLabInstance(url="https://gitlab.example.org")])
    target = parse_pull_url(
        "https://gitlab.example.org/team/app/-/merge_requests/3", "", alone.gitlab_url
    )
    with pytest.raises(ConfigError, match="GITLAB_TOKEN is not set"):
        token_host(alone, target, None)
