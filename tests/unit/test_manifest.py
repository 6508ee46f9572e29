"""The GitHub App manifest and the credentials file ``reviewbot setup`` writes."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from app.errors import ConfigError
from app.github.manifest import (
    EVENTS,
    PERMISSIONS,
    NewApp,
    convert,
    form_page,
    manifest,
    new_app_url,
    write_credentials,
)

ROOT = Path(__file__).resolve().parents[2]
APP = NewApp(7, "reviewbot", "-----BEGIN RSA PRIVATE KEY-----\nx\n", "whsec", "Iv1.a", "cs", "")


def test_the_manifest_points_github_at_the_webhook_and_back_at_the_callback() -> None:
    made = manifest("acme reviews", "https://bot.acme.example/", "http://127.0.0.1:8000/callback")
    assert made["hook_attributes"] == {
        "url": "https://bot.acme.example/webhooks/github",
        "active": True,
    }
    assert made["redirect_url"] == "http://127.0.0.1:8000/callback"
    assert made["default_permissions"]["pull_requests"] == "write"
    assert made["default_permissions"]["contents"] == "read"
    assert made["public"] is False


def test_readme_lists_the_permissions_and_events_the_manifest_asks_for() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("## Set up the GitHub App") :][:4000]
    for permission in PERMISSIONS:
        assert permission.replace("_", " ").capitalize() in section, permission
    for event in EVENTS:
        assert event.replace("_", " ").capitalize() in section, event


@pytest.mark.parametrize(
    ("api_url", "org", "page"),
    [
        ("https://api.github.com", None, "https://github.com/settings/apps/new?state=s1"),
        (
            "https://api.github.com",
            "acme",
            "https://github.com/organizations/acme/settings/apps/new?state=s1",
        ),
        (
            "https://ghe.acme.example/api/v3",
            None,
            "https://ghe.acme.example/settings/apps/new?state=s1",
        ),
    ],
)
def test_the_new_app_page_of_a_user_an_organisation_and_github_enterprise(
    api_url: str, org: str | None, page: str
) -> None:
    assert new_app_url(api_url, org, "s1") == page


@pytest.mark.parametrize("org", ["acme/../evil", "-acme", "a" * 40, ""])
def test_an_organisation_name_github_would_not_have_is_refused(org: str) -> None:
    with pytest.raises(ConfigError, match="not a GitHub organisation name"):
        new_app_url("https://api.github.com", org, "s1")


def test_the_form_carries_the_manifest_whatever_its_name_holds() -> None:
    made = manifest('"><script>alert(1)</script>', "https://bot.example", "http://x/callback")
    page = form_page("https://github.com/settings/apps/new?state=a&b", made)
    assert "<script>" not in page
    value = re.search(r'name="manifest" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    assert json.loads(html.unescape(value)) == made
    assert 'action="https://github.com/settings/apps/new?state=a&amp;b"' in page


def test_credentials_are_written_for_the_owner_only_and_other_lines_kept(tmp_path: Path) -> None:
    env_file = tmp_path / "conf" / "reviewbot.env"
    env_file.parent.mkdir()
    env_file.write_text("OPENAI_BASE_URL=http://llm:8080/v1\n")
    write_credentials(env_file, APP, "https://api.github.com", force=False)
    assert env_file.stat().st_mode & 0o777 == 0o600
    assert list(env_file.parent.iterdir()) == [env_file]  # no key file beside it
    lines = env_file.read_text().splitlines()
    assert lines[0] == "OPENAI_BASE_URL=http://llm:8080/v1"
    one_line = APP.pem.strip().replace("\n", "\\n")
    assert f"GITHUB_APP_PRIVATE_KEY={one_line}" in lines
    assert "GITHUB_APP_ID=7" in lines and "GITHUB_WEBHOOK_SECRET=whsec" in lines


def test_rewriting_credentials_drops_an_old_key_path(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("GITHUB_APP_PRIVATE_KEY_PATH=/old/key.pem\nKEEP=1\n")
    write_credentials(env_file, APP, "https://api.github.com", force=True)
    text = env_file.read_text()
    assert "GITHUB_APP_PRIVATE_KEY_PATH" not in text and "KEEP=1\n" in text


def test_existing_credentials_are_kept_unless_forced(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("GITHUB_APP_ID=3\n")
    with pytest.raises(ConfigError, match=r"already holds GITHUB_APP_ID; pass --force"):
        write_credentials(env_file, APP, "https://api.github.com", force=False)
    assert env_file.read_text() == "GITHUB_APP_ID=3\n"
    assert not (tmp_path / ".env.pem").exists()
    write_credentials(env_file, APP, "https://api.github.com", force=True)
    assert "GITHUB_APP_ID=3" not in env_file.read_text().splitlines()
    assert "GITHUB_APP_ID=7" in env_file.read_text().splitlines()


def test_the_example_env_file_takes_the_credentials_without_force(tmp_path: Path) -> None:
    """The README's path: copy .env.example (every key empty), then `reviewbot setup`."""
    env_file = tmp_path / ".env"
    shutil.copy(ROOT / ".env.example", env_file)
    write_credentials(env_file, APP, "https://api.github.com", force=False)
    lines = env_file.read_text().splitlines()
    assert "GITHUB_APP_ID=7" in lines and "GITHUB_APP_ID=" not in lines
    assert "OPENAI_API_KEY=" in lines  # the example's other lines are kept


@pytest.mark.parametrize("code", ["", "../../user", "a b", "x" * 101])
def test_a_code_that_cannot_be_githubs_is_refused_before_any_request(code: str) -> None:
    with pytest.raises(ConfigError, match="no usable code"):
        convert("http://127.0.0.1:9", code)  # nothing listens there: no request is made
