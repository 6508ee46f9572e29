"""``reviewbot doctor`` on a GitLab deployment: GitLab's token and webhook secret are
checked, GitHub's App is not asked for."""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings
from app.flows.doctor import run_checks
from app.gitlab.checks import gitlab_checks
from tests.conftest import GITLAB_SECRET, GITLAB_TOKEN
from tests.fakes.gitlab_server import FakeGitLab


def test_gitlab_checks_pass_with_a_working_token(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    checks = {
        c.name: c
        for c in run_checks(gitlab_settings, engine, False, gitlab_checks(gitlab_settings))
    }
    assert checks["GitLab"].ok and checks["GitLab webhooks"].ok
    assert "as @reviewbot" in checks["GitLab"].detail and "17.6.0" in checks["GitLab"].detail


def test_a_wrong_token_is_named_with_its_fix_and_never_shown(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    wrong = gitlab_settings.model_copy(
        update={"gitlab_token": SecretStr("glpat-wrong-9876543210"), "gitlab_webhook_secret": None}
    )
    checks = {c.name: c for c in run_checks(wrong, engine, False, gitlab_checks(wrong))}
    assert not checks["GitLab"].ok and "401" in checks["GitLab"].detail
    assert "api scope" in checks["GitLab"].fix
    assert not checks["GitLab webhooks"].ok
    assert "glpat-wrong" not in json.dumps([c.as_json() for c in checks.values()])


def test_doctor_on_a_gitlab_only_deployment_skips_the_github_app(
    cli_env: object, gitlab: FakeGitLab, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITLAB_URL", gitlab.base_url)
    monkeypatch.setenv("GITLAB_TOKEN", GITLAB_TOKEN)
    monkeypatch.setenv("GITLAB_WEBHOOK_SECRET", GITLAB_SECRET)
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["GitLab"]["ok"] and checks["GitLab webhooks"]["ok"]
    assert "GitHub App" not in checks and "webhooks" not in checks


@pytest.mark.parametrize(
    ("scopes", "version", "said", "fix"),
    [
        (
            ["read_api", "read_repository"],
            "17.6.0",
            "scopes are read_api, read_repository",
            "api scope",
        ),
        (["api"], "15.6.3-ee", "older than GitLab 15.7", "upgrade GitLab to 15.7"),
    ],
)
def test_a_token_that_cannot_write_or_an_old_instance_fails(
    gitlab_settings: Settings,
    engine: Engine,
    gitlab: FakeGitLab,
    scopes: list[str],
    version: str,
    said: str,
    fix: str,
) -> None:
    gitlab.token_scopes, gitlab.version = scopes, version
    checks = {
        c.name: c
        for c in run_checks(gitlab_settings, engine, False, gitlab_checks(gitlab_settings))
    }
    assert not checks["GitLab"].ok
    assert said in checks["GitLab"].detail and fix in checks["GitLab"].fix


MR_HOOK_URL = "https://reviewbot.example.com/webhooks/gitlab"
EVENTS = {"merge_requests_events": True, "note_events": True, "push_events": True}


@pytest.mark.parametrize(
    ("access", "hooks", "ok", "said"),
    [
        (40, [{"id": 1, "url": MR_HOOK_URL, **EVENTS}], True, "sends what the bot needs"),
        (20, [], False, "role is Reporter"),
        (30, [], True, "need Maintainer to read"),
        (40, [], False, "no webhook to reviewbot"),
        (40, [{"id": 1, "url": MR_HOOK_URL, **EVENTS, "note_events": False}], False, "comments"),
        (
            40,
            [{"id": 1, "url": MR_HOOK_URL, **EVENTS, "alert_status": "disabled"}],
            False,
            "GitLab has disabled the webhook",
        ),
        (
            40,
            [{"id": 2, "url": MR_HOOK_URL, **EVENTS}],
            False,
            "last 2 deliveries failed (401, 401)",
        ),
    ],
)
def test_each_project_is_checked_for_the_tokens_role_and_its_webhook(
    gitlab_settings: Settings,
    engine: Engine,
    gitlab: FakeGitLab,
    access: int,
    hooks: list[dict[str, object]],
    ok: bool,
    said: str,
) -> None:
    gitlab.token_access, gitlab.hooks = access, hooks
    # hook 2's newest deliveries were refused (a wrong secret), after one that went through
    gitlab.hook_events[2] = [{"response_status": s} for s in ("401", "401", "200", "500")]
    checks = gitlab_checks(gitlab_settings, lambda _: ["acme/shop"])
    found = {c.name: c for c in run_checks(gitlab_settings, engine, False, checks)}
    project = found["GitLab project acme/shop"]
    assert project.ok is ok and said in project.detail, project.detail
