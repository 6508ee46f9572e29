"""A self-managed GitLab behind a private CA: the fake GitLab over TLS with a certificate
of its own CA. Without ``REVIEWBOT_CA_BUNDLE`` the bot says what to set; with it the
API (doctor, a review) and git (the history fetch) both trust the CA."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine

from app.config import Settings
from app.flows.doctor import run_checks
from app.flows.review import review_pull_request
from app.gitlab.checks import gitlab_checks
from app.gitlab.host import GitLabHost
from app.gitlab.records import repo_key
from app.runtime import Runtime
from tests.conftest import (
    GITLAB_PROJECT,
    GITLAB_PROJECT_ID,
    GITLAB_SECRET,
    GITLAB_TOKEN,
    shop_on_gitlab,
)
from tests.fakes.gitlab_server import FakeGitLab
from tests.fakes.openai_server import FakeOpenAI
from tests.keys import private_ca
from tests.shop_repo import review_reply


@pytest.fixture
def ca(tmp_path: Path) -> tuple[Path, ssl.SSLContext]:
    ca_pem, cert, key = private_ca(tmp_path / "tls")
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    return ca_pem, server


@pytest.fixture
def tls_gitlab(tmp_path: Path, ca: tuple[Path, ssl.SSLContext]) -> Iterator[FakeGitLab]:
    with shop_on_gitlab(tmp_path / "shop", tls=ca[1]) as fake:
        yield fake


def settings_for(llm_settings: Settings, gitlab: FakeGitLab) -> Settings:
    return llm_settings.model_copy(
        update={
            "gitlab_url": gitlab.base_url,
            "gitlab_token": SecretStr(GITLAB_TOKEN),
            "gitlab_webhook_secret": SecretStr(GITLAB_SECRET),
        }
    )


def test_an_untrusted_certificate_names_the_setting_and_the_bundle_fixes_it(
    llm_settings: Settings,
    engine: Engine,
    tls_gitlab: FakeGitLab,
    ca: tuple[Path, ssl.SSLContext],
    fake_openai: FakeOpenAI,
) -> None:
    assert tls_gitlab.base_url.startswith("https://")
    plain = settings_for(llm_settings, tls_gitlab)
    checks = {c.name: c for c in run_checks(plain, engine, False, gitlab_checks(plain))}
    assert not checks["GitLab"].ok
    assert "REVIEWBOT_CA_BUNDLE" in checks["GitLab"].detail

    trusted = plain.model_copy(update={"ca_bundle": ca[0]})
    checks = {c.name: c for c in run_checks(trusted, engine, False, gitlab_checks(trusted))}
    assert checks["GitLab"].ok, checks["GitLab"].detail
    fake_openai.chat_reply = review_reply
    repo = repo_key(tls_gitlab.base_url, GITLAB_PROJECT)
    assert review_pull_request(Runtime(trusted, engine), repo, GITLAB_PROJECT_ID, 7) == "posted"
    # git trusts it too: the history is fetched over the same TLS
    _clone, head = GitLabHost(trusted).fetch_history(
        GITLAB_PROJECT_ID, repo, "main", trusted.data_dir / "clone.git", 30.0, None
    )
    assert head == tls_gitlab.mrs[7].head


def test_a_bundle_that_is_not_pem_is_named(
    llm_settings: Settings, engine: Engine, tls_gitlab: FakeGitLab, tmp_path: Path
) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    wrong = settings_for(llm_settings, tls_gitlab).model_copy(update={"ca_bundle": junk})
    checks = {c.name: c for c in run_checks(wrong, engine, False, gitlab_checks(wrong))}
    assert not checks["GitLab"].ok
    assert "not a readable PEM file" in checks["GitLab"].detail
    assert "REVIEWBOT_CA_BUNDLE" in checks["GitLab"].fix
