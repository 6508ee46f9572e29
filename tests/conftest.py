"""Shared fixtures: a real PostgreSQL with pgvector, one fresh database per test.

The server is ``TEST_DATABASE_URL`` (its role needs CREATEDB) or, by default, the
embedded PostgreSQL 18 started once per test session in a temporary data directory.
A template database is migrated once; each test gets a copy (``CREATE DATABASE ...
TEMPLATE``), which takes a few tens of milliseconds.
"""

from __future__ import annotations

import os
import ssl
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import Engine, text
from sqlalchemy.engine import URL

from app.config import Settings
from app.db.embedded import start_embedded_server
from app.db.engine import DatabaseTarget, make_engine, parse_database_url
from app.db.migrate import upgrade
from app.runtime import Runtime
from tests.dashboard_data import Seeded, seed
from tests.fakes.github_server import FakeGitHub, PullState, running_fake_github
from tests.fakes.gitlab_server import FakeGitLab, MergeRequest, running_fake_gitlab
from tests.fakes.openai_server import FakeOpenAI, running_fake_openai
from tests.keys import rsa_key_pair
from tests.shop_repo import make_history, review_reply


@pytest.fixture(scope="session")
def pg_server_url(tmp_path_factory: pytest.TempPathFactory) -> URL:
    """URL of a database on the test server, used to create and drop test databases."""
    raw = os.environ.get("TEST_DATABASE_URL")
    if raw:
        return parse_database_url(raw)
    return start_embedded_server(tmp_path_factory.mktemp("embedded-pg"))


def _admin(url: URL) -> Engine:
    return make_engine(DatabaseTarget(url, embedded=False), isolation_level="AUTOCOMMIT")


def create_database(server_url: URL, template: str | None = None) -> URL:
    """Create an empty (or templated) database on the test server; return its URL."""
    name = f"rbtest_{uuid.uuid4().hex[:12]}"
    admin = _admin(server_url)
    with admin.connect() as conn:
        suffix = f' TEMPLATE "{template}"' if template else ""
        conn.execute(text(f'CREATE DATABASE "{name}"{suffix}'))
    admin.dispose()
    return server_url.set(database=name)


def drop_database(server_url: URL, url: URL) -> None:
    admin = _admin(server_url)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def template_database(pg_server_url: URL) -> Iterator[str]:
    url = create_database(pg_server_url)
    engine = make_engine(DatabaseTarget(url, embedded=False))
    upgrade(engine)
    engine.dispose()
    yield str(url.database)
    drop_database(pg_server_url, url)


@pytest.fixture
def database_url(pg_server_url: URL, template_database: str) -> Iterator[URL]:
    """A fresh database migrated to head, dropped after the test."""
    url = create_database(pg_server_url, template=template_database)
    yield url
    drop_database(pg_server_url, url)


@pytest.fixture
def empty_database_url(pg_server_url: URL) -> Iterator[URL]:
    """A fresh database with nothing in it, dropped after the test."""
    url = create_database(pg_server_url)
    yield url
    drop_database(pg_server_url, url)


@pytest.fixture
def engine(database_url: URL) -> Iterator[Engine]:
    engine = make_engine(DatabaseTarget(database_url, embedded=False))
    yield engine
    engine.dispose()


@pytest.fixture
def settings(database_url: URL, tmp_path: Path) -> Settings:
    """Settings pointing at this test's database, with no LLM and no GitHub."""
    return Settings(
        database_url=database_url.render_as_string(hide_password=False),
        data_dir=tmp_path / "data",
    )


#: ``make_client(configured=None, **options)``: the app as a ``TestClient``.
MakeClient = Callable[..., TestClient]


@pytest.fixture
def make_client(settings: Settings, engine: Engine) -> Iterator[MakeClient]:
    """The app on this test's database, as ``make_client(configured=None, **options)``:
    a ``TestClient`` of ``create_app(configured or settings)`` with the client's
    ``options``, entered now and closed when the test ends."""
    from app.api.main import create_app

    with ExitStack() as stack:

        def make(configured: Settings | None = None, **options: Any) -> TestClient:
            app = create_app(configured or settings, engine)
            return stack.enter_context(TestClient(app, **options))

        yield make


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's own configuration."""
    for name in list(os.environ):
        if (
            name.startswith(("REVIEWBOT_", "GITHUB_", "GITLAB_", "OPENAI_", "AZURE_"))
            or name == "DATABASE_URL"
        ):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A real HTTP server on 127.0.0.1 speaking the OpenAI protocol."""
    with running_fake_openai() as fake:
        yield fake


@pytest.fixture
def llm_settings(settings: Settings, fake_openai: FakeOpenAI) -> Settings:
    """``settings`` pointed at the fake OpenAI server, with quick retries."""
    return settings.model_copy(
        update={
            "openai_base_url": fake_openai.base_url,
            "openai_api_key": SecretStr("sk-test-0123456789abcdef"),
            "llm_max_retries": 2,
            "llm_timeout_seconds": 10.0,
        }
    )


@pytest.fixture
def cli_env(database_url: URL, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> URL:
    """The environment a `reviewbot` command sees: this test's database and data folder."""
    monkeypatch.setenv("DATABASE_URL", database_url.render_as_string(hide_password=False))
    monkeypatch.setenv("REVIEWBOT_DATA_DIR", str(tmp_path / "data"))
    return database_url


@pytest.fixture(scope="session")
def app_key() -> tuple[str, str]:
    """An RSA key pair for the test GitHub App: (private PEM, public PEM)."""
    return rsa_key_pair()


GITHUB_REPO = "acme/shop"
GITHUB_INSTALLATION = 99
GITHUB_APP_ID = 42


@pytest.fixture
def github(tmp_path: Path, app_key: tuple[str, str]) -> Iterator[FakeGitHub]:
    repo, base = make_history(tmp_path / "shop")
    head = repo.git("rev-parse", "HEAD").decode().strip()
    with running_fake_github(repo, GITHUB_REPO, GITHUB_APP_ID, app_key[1]) as fake:
        fake.pulls[7] = PullState(7, base, head)
        yield fake
    # every body the bot sent is one GitHub's OpenAPI description accepts
    assert fake.refused == [], fake.refused


@pytest.fixture
def github_settings(
    llm_settings: Settings,
    github: FakeGitHub,
    fake_openai: FakeOpenAI,
    app_key: tuple[str, str],
) -> Settings:
    """Settings of a GitHub App pointed at the fake GitHub and the fake model."""
    fake_openai.chat_reply = review_reply
    return llm_settings.model_copy(
        update={
            "github_app_id": GITHUB_APP_ID,
            "github_app_private_key": SecretStr(app_key[0]),
            "github_api_url": github.base_url,
            "github_webhook_secret": SecretStr("whsec-test-0123456789"),
        }
    )


@pytest.fixture
def run(github_settings: Settings, engine: Engine) -> Runtime:
    return Runtime(github_settings, engine)


GITLAB_PROJECT = "acme/shop"
GITLAB_PROJECT_ID = 15
GITLAB_TOKEN = "glpat-test-0123456789abcdef"
GITLAB_SECRET = "gl-webhook-secret-0123456789"


@pytest.fixture
def gitlab(tmp_path: Path) -> Iterator[FakeGitLab]:
    """A fake GitLab serving the shop repository as project 15 with MR !7."""
    with shop_on_gitlab(tmp_path / "shop") as fake:
        fake.members = {"alice": 30, "bob": 20}
        fake.webhook_secret = GITLAB_SECRET
        yield fake


@contextmanager
def shop_on_gitlab(
    root: Path, token: str = GITLAB_TOKEN, tls: ssl.SSLContext | None = None
) -> Iterator[FakeGitLab]:
    """A fake GitLab instance (over TLS with ``tls``) serving the shop repository made
    under ``root`` as project 15 with MR !7; on leaving, every body the bot sent it must
    be one GitLab's documentation accepts."""
    repo, base = make_history(root)
    head = repo.git("rev-parse", "HEAD").decode().strip()
    with running_fake_gitlab(repo, GITLAB_PROJECT, GITLAB_PROJECT_ID, token, tls) as fake:
        fake.mrs[7] = MergeRequest(7, base, head)
        yield fake
    assert fake.refused == [], fake.refused


@pytest.fixture
def gitlab_settings(
    llm_settings: Settings, gitlab: FakeGitLab, fake_openai: FakeOpenAI
) -> Settings:
    """Settings of a GitLab deployment pointed at the fake GitLab and the fake model."""
    fake_openai.chat_reply = review_reply
    return llm_settings.model_copy(
        update={
            "gitlab_url": gitlab.base_url,
            "gitlab_token": SecretStr(GITLAB_TOKEN),
            "gitlab_webhook_secret": SecretStr(GITLAB_SECRET),
        }
    )


@pytest.fixture
def seeded(request: pytest.FixtureRequest, engine: Engine, tmp_path: Path) -> Seeded:
    """The dashboard's repositories, reviews and jobs (``tests/dashboard_data.seed``); a
    module or test marked ``@pytest.mark.reviews(n)`` gets ``n`` reviews (60 by default)."""
    marker = request.node.get_closest_marker("reviews")
    return seed(engine, tmp_path, reviews=marker.args[0] if marker else 60)
