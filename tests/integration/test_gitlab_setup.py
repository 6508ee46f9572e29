"""`reviewbot setup gitlab` against the fake GitLab: the project's webhook made through
the API with a fresh secret, the settings written (readable by their owner only), a
second run refused unless forced, and a token that may not manage hooks named."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.errors import ConfigError
from tests.conftest import GITLAB_TOKEN
from tests.fakes.gitlab_server import FakeGitLab

runner = CliRunner()
PUBLIC = "https://reviewbot.example.com"


@pytest.fixture
def env(gitlab: FakeGitLab, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITLAB_URL", gitlab.base_url)
    monkeypatch.setenv("GITLAB_TOKEN", GITLAB_TOKEN)


def command(env_file: Path, *extra: str) -> list[str]:
    args = ["setup", "gitlab", "--project", "acme/shop", "--public-url", PUBLIC]
    return [*args, "--env-file", str(env_file), *extra]


def setup(env_file: Path, *extra: str) -> str:
    done = runner.invoke(cli, command(env_file, *extra), catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output


def settings_in(env_file: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in env_file.read_text().splitlines())


def test_the_webhook_is_made_and_its_secret_written(
    env: None, gitlab: FakeGitLab, tmp_path: Path
) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("OPENAI_API_KEY=sk-kept-0123456789\n")
    said = setup(env_file)
    [hook] = gitlab.hooks
    assert hook["url"] == f"{PUBLIC}/webhooks/gitlab"
    assert hook["merge_requests_events"] and hook["note_events"] and hook["push_events"]
    written = settings_in(env_file)
    assert written["GITLAB_WEBHOOK_SECRET"] == hook["token"] and len(hook["token"]) >= 32
    assert written["GITLAB_URL"] == gitlab.base_url
    assert written["OPENAI_API_KEY"] == "sk-kept-0123456789"  # the rest is kept
    assert GITLAB_TOKEN not in env_file.read_text()  # the setup token is not stored
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert hook["token"] not in said  # the secret is not printed

    with pytest.raises(ConfigError, match="already holds GITLAB_WEBHOOK_SECRET"):
        runner.invoke(cli, command(env_file), catch_exceptions=False)
    first = hook["token"]
    setup(env_file, "--force")
    [renewed] = gitlab.hooks  # the same hook, a new secret
    assert renewed["token"] != first
    assert settings_in(env_file)["GITLAB_WEBHOOK_SECRET"] == renewed["token"]


def test_a_token_below_maintainer_is_named_and_nothing_is_written(
    env: None, gitlab: FakeGitLab, tmp_path: Path
) -> None:
    gitlab.token_access = 30
    env_file = tmp_path / ".env"
    with pytest.raises(ConfigError, match="Maintainer"):
        runner.invoke(cli, command(env_file), catch_exceptions=False)
    assert gitlab.hooks == [] and not env_file.exists()
