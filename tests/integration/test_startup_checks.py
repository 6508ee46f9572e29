"""`serve` and `worker` refuse App credentials GitHub would refuse, before doing any work."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import URL
from typer.testing import CliRunner

from app.cli import cli
from app.errors import ConfigError
from tests.conftest import GITHUB_APP_ID
from tests.fakes.github_server import FakeGitHub

runner = CliRunner()


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_wrong_app_id_stops_start_up_with_one_line(
    command: str,
    cli_env: URL,
    github: FakeGitHub,
    app_key: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_APP_ID", str(GITHUB_APP_ID + 1))
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY", app_key[0])
    monkeypatch.setenv("GITHUB_API_URL", github.base_url)
    result = runner.invoke(cli, [command])
    assert isinstance(result.exception, ConfigError)
    assert "GitHub refused the App's credentials (HTTP 401)" in str(result.exception)
    assert ("GET", "/app") in github.requests


def test_malformed_key_stops_start_up_before_any_request(
    cli_env: URL, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_APP_ID", str(GITHUB_APP_ID))
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n")
    monkeypatch.setenv("GITHUB_API_URL", github.base_url)
    result = runner.invoke(cli, ["worker"])
    assert isinstance(result.exception, ConfigError)
    assert "not a usable RSA private key" in str(result.exception)
    assert github.requests == []
