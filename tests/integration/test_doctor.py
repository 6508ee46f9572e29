"""``reviewbot doctor``: each part of an installation checked, ok or with its fix, against
the real database, the fake GitHub and the fake model server."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine, text
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings
from app.flows.doctor import run_checks
from app.github.checks import github_checks
from tests.fakes.github_server import FakeGitHub
from tests.fakes.openai_server import CHAT, EMBEDDINGS, FakeOpenAI


def _by_name(settings: Settings, engine: Engine | None) -> dict[str, object]:
    checks = run_checks(settings, engine, embedded=False, host=github_checks(settings))
    return {c.name: c for c in checks}


def _alive_worker(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO procrastinate_workers DEFAULT VALUES"))


def test_a_healthy_installation_passes_every_check(
    github_settings: Settings, engine: Engine, github: FakeGitHub
) -> None:
    _alive_worker(engine)
    github.deliver("ping", {"zen": "Keep it logically awesome."})  # nobody listens: 0
    github.deliveries[-1]["status_code"] = 202
    checks = _by_name(github_settings, engine)
    assert {name: c.ok for name, c in checks.items()} == {  # type: ignore[attr-defined]
        "database": True,
        "job queue": True,
        "GitHub App": True,
        "webhooks": True,
        "review model": True,
        "summary model": True,
        "embeddings": True,
        "git": True,
        "tools": True,
    }
    assert "shellcheck 0." in checks["tools"].detail  # type: ignore[attr-defined]
    assert "1 installation" in checks["GitHub App"].detail  # type: ignore[attr-defined]
    assert "response format json_schema" in checks["review model"].detail  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("break_it", "name", "said", "fix"),
    [
        (
            lambda s, g, f: s.model_copy(update={"github_app_id": 7}),
            "GitHub App",
            "401",
            "GITHUB_APP_ID",
        ),
        (
            lambda s, g, f: s.model_copy(
                update={"github_app_id": None, "github_app_private_key": None}
            ),
            "GitHub App",
            "not configured",
            "reviewbot setup",
        ),
        (
            lambda s, g, f: (
                g.deliveries.append({"id": 9, "status_code": 401, "event": "push"}) or s
            ),
            "webhooks",
            "answered 401",
            "GITHUB_WEBHOOK_SECRET",
        ),
        (
            lambda s, g, f: f.fail_next(CHAT, [401] * 4) or s,
            "review model",
            "401",
            "OPENAI_API_KEY",
        ),
        (
            lambda s, g, f: s.model_copy(update={"openai_base_url": "http://127.0.0.1:9/v1"}),
            "review model",
            "",
            "OPENAI_BASE_URL",
        ),
        (
            lambda s, g, f: s.model_copy(update={"summary_base_url": "http://127.0.0.1:9/v1"}),
            "summary model",
            "cannot connect",
            "REVIEWBOT_SUMMARY_BASE_URL",
        ),
        (
            lambda s, g, f: setattr(f, "embedding_dims", 3072) or s,
            "embeddings",
            "3072",
            "REVIEWBOT_EMBEDDING_DIMENSIONS",
        ),
    ],
)
def test_each_misconfiguration_is_named_with_its_fix(
    github_settings: Settings,
    engine: Engine,
    github: FakeGitHub,
    fake_openai: FakeOpenAI,
    break_it: object,
    name: str,
    said: str,
    fix: str,
) -> None:
    _alive_worker(engine)
    github.deliveries.append({"id": 1, "status_code": 202, "event": "ping"})
    broken = break_it(github_settings, github, fake_openai)  # type: ignore[operator]
    check = _by_name(broken, engine)[name]
    assert not check.ok and said in check.detail and fix in check.fix  # type: ignore[attr-defined]


def test_no_worker_and_no_database_are_named(github_settings: Settings, engine: Engine) -> None:
    queue = _by_name(github_settings, engine)["job queue"]
    assert not queue.ok and "reviewbot worker" in queue.fix  # type: ignore[attr-defined]
    gone = _by_name(github_settings, None)
    assert not gone["database"].ok and not gone["job queue"].ok  # type: ignore[attr-defined]


def test_doctor_json_and_exit_code(
    cli_env: object, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    data = json.loads(result.stdout)
    assert result.exit_code == 0  # no code host: what the CLI needs, and it is all there
    assert data["mode"] == "cli"
    names = [c["name"] for c in data["checks"]]
    assert names[:2] == ["database", "review model"]
    assert set(data["checks"][0]) == {"name", "ok", "detail", "fix", "server_only"}
    assert data["checks"][0]["ok"] is True
    assert "sk-test" not in result.stdout
    assert fake_openai.calls(EMBEDDINGS) == 1
    monkeypatch.setenv("GITLAB_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-0123456789abcdef")
    failed = CliRunner().invoke(cli, ["doctor", "--json"])
    assert failed.exit_code == 1  # a server: no worker, and GitLab does not answer
    assert json.loads(failed.stdout)["mode"] == "server"
