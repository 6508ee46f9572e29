"""``reviewbot setup``: the App made through GitHub's manifest flow, against the fake GitHub
(its "new App" page and ``POST /app-manifests/{code}/conversions``), with a browser's part
played by httpx: open the page, press the button, follow GitHub's redirect back."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import URL

from app.config import Settings, load_settings
from app.errors import ConfigError, ReviewbotError
from app.github.client import GitHubApp
from app.github.credentials import verify_app_identity
from app.github.setup import SetupRequest, SetupResult, run_setup
from tests.fakes.github_server import FakeGitHub
from tests.fakes.loopback import free_port
from tests.processes import clean_env
from tests.support.app import wait_for

pytestmark = pytest.mark.slow

PUBLIC_URL = "https://reviewbot.acme.example"


def _press_the_button(page_url: str) -> httpx.Response:
    """What a browser does: load the page, submit its form to GitHub, follow GitHub's
    redirect back to the callback."""
    page = httpx.get(page_url, timeout=10).text
    action = html.unescape(re.search(r'<form action="([^"]+)"', page).group(1))  # type: ignore[union-attr]
    value = html.unescape(re.search(r'name="manifest" value="([^"]+)"', page).group(1))  # type: ignore[union-attr]
    return httpx.post(action, data={"manifest": value}, follow_redirects=True, timeout=30)


def _setup_process(github: FakeGitHub, cwd: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable, "-m", "app.cli", "setup", "--public-url", PUBLIC_URL,
            "--github-url", github.base_url, "--port", "0", "--no-browser", *extra,
        ],
        cwd=cwd,
        env=clean_env(PYTHONPATH=str(Path(__file__).resolve().parents[2])),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _page_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"Open (http://\S+/) ", line)
    assert found, line
    return found.group(1)


def test_setup_creates_the_app_and_serve_starts_with_its_credentials(
    github: FakeGitHub, tmp_path: Path, cli_env: URL
) -> None:
    (tmp_path / "creds.env").write_text("REVIEWBOT_LOG_LEVEL=INFO\n")  # kept
    setup = _setup_process(github, tmp_path, "--env-file", "creds.env")
    landed = _press_the_button(_page_url(setup))
    stdout, stderr = setup.communicate(timeout=30)
    assert setup.returncode == 0, stderr
    assert landed.status_code == 200 and "was created" in landed.text
    assert github.refused == []  # the manifest's permissions and events are GitHub's

    env_file = tmp_path / "creds.env"
    assert env_file.stat().st_mode & 0o777 == 0o600
    assert not (tmp_path / "creds.env.pem").exists()  # the key is in the one file
    written = dict(line.split("=", 1) for line in env_file.read_text().splitlines())
    assert written["REVIEWBOT_LOG_LEVEL"] == "INFO"
    assert written["GITHUB_APP_ID"] == str(github.app_id)
    assert written["GITHUB_WEBHOOK_SECRET"] == github.webhook_secret
    assert written["GITHUB_API_URL"] == github.base_url
    # one line, as compose's env_file passes it on; the settings read the same key
    assert written["GITHUB_APP_PRIVATE_KEY"].startswith("-----BEGIN RSA PRIVATE KEY-----\\n")
    key = written["GITHUB_APP_PRIVATE_KEY"]
    assert github.webhook_url == f"{PUBLIC_URL}/webhooks/github"
    for secret in (github.webhook_secret, written["GITHUB_CLIENT_SECRET"], key[40:80]):
        assert secret.strip()[:40] not in stdout + stderr
    assert "Start with: REVIEWBOT_ENV_FILE=creds.env reviewbot serve" in stdout

    # serve starts with that file: GitHub accepts the App's key, and a webhook signed with
    # the new secret is taken
    port = free_port()
    serve = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=clean_env(
            REVIEWBOT_ENV_FILE="creds.env",
            DATABASE_URL=cli_env.render_as_string(hide_password=False),
            REVIEWBOT_DATA_DIR=str(tmp_path / "data"),
            REVIEWBOT_SERVE_WORKER="false",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: _answers(f"http://127.0.0.1:{port}/healthz"), seconds=60)
        github.webhook_url = f"http://127.0.0.1:{port}/webhooks/github"
        assert github.deliver("ping", {"zen": "Design for failure.", "hook_id": 1}) == 200
    finally:
        serve.terminate()
        _, serve_err = serve.communicate(timeout=30)
    # no start-up warning about the App (GitHub accepted its key), no error line
    assert not re.search(r"warning:|error:| WARNING | ERROR ", serve_err), serve_err
    assert "INFO" in serve_err  # the file's other line (REVIEWBOT_LOG_LEVEL) was read too


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def test_setup_refuses_to_replace_credentials_without_force(
    github: FakeGitHub, tmp_path: Path
) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("GITHUB_APP_ID=7\nGITHUB_WEBHOOK_SECRET=keep-me\n")
    refused = _setup_process(github, tmp_path)
    _, stderr = refused.communicate(timeout=30)
    assert refused.returncode == 1
    assert "already holds GITHUB_APP_ID, GITHUB_WEBHOOK_SECRET; pass --force" in stderr
    assert "keep-me" not in stderr
    assert env_file.read_text() == "GITHUB_APP_ID=7\nGITHUB_WEBHOOK_SECRET=keep-me\n"
    assert github.manifests == {} and ("POST", "/settings/apps/new") not in github.requests

    forced = _setup_process(github, tmp_path, "--force")
    _press_the_button(_page_url(forced))
    stdout, _ = forced.communicate(timeout=30)
    assert forced.returncode == 0
    assert "Start with: reviewbot serve" in stdout  # .env here: nothing else to say
    assert "keep-me" not in env_file.read_text()
    assert f"GITHUB_APP_ID={github.app_id}\n" in env_file.read_text()


def _in_thread(request: SetupRequest) -> tuple[threading.Thread, list[str], list[object]]:
    """``run_setup`` in a thread: the page's URL once it is served, and its outcome."""
    urls: list[str] = []
    outcome: list[object] = []

    def go() -> None:
        try:
            outcome.append(run_setup(request, "127.0.0.1", 0, urls.append, timeout_seconds=30))
        except ReviewbotError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=go)
    thread.start()
    wait_for(lambda: bool(urls), seconds=10)
    return thread, urls, outcome


def test_an_organisations_app_and_a_callback_from_another_run(
    github: FakeGitHub, tmp_path: Path
) -> None:
    request = SetupRequest(github.base_url, PUBLIC_URL, tmp_path / ".env", organization="acme")
    thread, urls, outcome = _in_thread(request)
    page = httpx.get(urls[0]).text
    assert f"{github.base_url}/organizations/acme/settings/apps/new?state=" in page
    # a callback whose state this run did not make is refused, and the run goes on
    stray = httpx.get(f"{urls[0]}callback?code=code0000&state=forged")
    assert stray.status_code == 400 and outcome == []
    assert _press_the_button(urls[0]).status_code == 200
    thread.join(30)
    [result] = outcome
    assert isinstance(result, SetupResult) and result.app.id == github.app_id
    assert result.app.html_url == f"{github.base_url}/apps/reviewbot"


def test_a_code_github_no_longer_knows_fails_clearly_and_writes_nothing(
    github: FakeGitHub, tmp_path: Path
) -> None:
    request = SetupRequest(github.base_url, PUBLIC_URL, tmp_path / ".env")
    thread, urls, outcome = _in_thread(request)
    state = re.search(r"state=([\w-]+)", httpx.get(urls[0]).text).group(1)  # type: ignore[union-attr]
    answer = httpx.get(f"{urls[0]}callback?code=code0042&state={state}")
    thread.join(30)
    assert answer.status_code == 502
    assert "does not know this code (HTTP 404)" in answer.text
    [error] = outcome
    assert isinstance(error, ReviewbotError) and "HTTP 404" in str(error)
    assert "Delete the App on GitHub" in str(error)
    assert not (tmp_path / ".env").exists()


def _unreachable(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("Connection refused", request=request)


def test_a_failed_exchange_names_github_and_setup_code_retries_it(
    github: FakeGitHub, tmp_path: Path
) -> None:
    """The App exists on GitHub once the browser comes back; when the exchange cannot
    reach GitHub, the error says where and how to fetch the credentials with the code."""
    request = SetupRequest(github.base_url, PUBLIC_URL, tmp_path / ".env")
    urls: list[str] = []
    outcome: list[object] = []

    def go() -> None:
        try:
            outcome.append(
                run_setup(
                    request,
                    "127.0.0.1",
                    0,
                    urls.append,
                    timeout_seconds=30,
                    transport=httpx.MockTransport(_unreachable),
                )
            )
        except ReviewbotError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=go)
    thread.start()
    wait_for(lambda: bool(urls), seconds=10)
    landed = _press_the_button(urls[0])
    thread.join(30)
    assert landed.status_code == 502
    [error] = outcome
    code = github.manifests and next(iter(github.manifests))
    assert isinstance(error, ReviewbotError) and code
    assert f"cannot reach GitHub at {github.base_url} (ConnectError" in str(error)
    assert f"run `reviewbot setup --code {code}`" in str(error)
    assert not (tmp_path / ".env").exists()

    retried = subprocess.run(
        [sys.executable, "-m", "app.cli", "setup", "--code", code,
         "--github-url", github.base_url],
        cwd=tmp_path,
        env=clean_env(PYTHONPATH=str(Path(__file__).resolve().parents[2])),
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert retried.returncode == 0, retried.stderr
    assert f"GITHUB_APP_ID={github.app_id}\n" in (tmp_path / ".env").read_text()
    settings = Settings(_env_file=tmp_path / ".env")  # type: ignore[call-arg]
    assert settings.github_app_id == github.app_id
    assert (
        settings.github_private_key()
        .get_secret_value()
        .startswith("-----BEGIN RSA PRIVATE KEY-----\n")
    )  # type: ignore[union-attr]


def test_setup_without_an_address_or_a_code_says_what_to_give(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "setup", "--no-browser"],
        cwd=tmp_path,
        env=clean_env(PYTHONPATH=str(Path(__file__).resolve().parents[2])),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: give --public-url (where GitHub will reach `reviewbot serve`)"
    )


def test_the_fake_refuses_a_manifest_github_would(github: FakeGitHub) -> None:
    """The conformance check itself can fail: an unknown permission is refused."""
    bad = {
        "name": "x",
        "url": PUBLIC_URL,
        "redirect_url": PUBLIC_URL,
        "hook_attributes": {"url": PUBLIC_URL},
        "default_permissions": {"pull_request": "write"},  # it is pull_requests
    }
    answer = httpx.post(
        f"{github.base_url}/settings/apps/new?state=s", data={"manifest": json.dumps(bad)}
    )
    assert answer.status_code == 422 and "pull_request" in answer.text
    github.refused.clear()


def test_only_the_new_apps_key_is_accepted_after_setup(
    github: FakeGitHub, tmp_path: Path, app_key: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fake's App check is real: after setup, the key GitHub handed over signs for
    the new App, and the old key no longer does."""
    thread, urls, _ = _in_thread(SetupRequest(github.base_url, PUBLIC_URL, tmp_path / ".env"))
    _press_the_button(urls[0])
    thread.join(30)
    monkeypatch.setenv("REVIEWBOT_ENV_FILE", str(tmp_path / ".env"))
    new = load_settings()
    assert verify_app_identity(GitHubApp(new)) is None
    old = new.model_copy(update={"github_app_private_key": SecretStr(app_key[0]),
                                 "github_app_private_key_path": None})  # fmt: skip
    with pytest.raises(ConfigError, match="HTTP 401"):
        verify_app_identity(GitHubApp(old))
