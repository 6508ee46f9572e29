"""Two GitLab instances served by one deployment (``GITLAB_URL`` and ``GITLAB_INSTANCES``):
each delivery is told apart by its webhook's secret (or, where two instances share a
secret, by the project's URL), and reviewed on its own instance with its own token; a
secret that is neither instance's is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine, text

from app.config import Settings
from app.gitlab_instances import GitLabInstance
from tests.conftest import GITLAB_PROJECT, shop_on_gitlab
from tests.fakes.gitlab_server import FakeGitLab
from tests.support.app import jobs_left, serving, wait_for
from tests.support.gitlab import MR_HOOK, mr_event, send_gitlab

OTHER_TOKEN = "glpat-other-instance-0123456789"
OTHER_SECRET = "gl-other-webhook-secret-0123456789"


@pytest.fixture
def other(tmp_path: Path) -> Iterator[FakeGitLab]:
    """A second GitLab instance, with the same project path and id as the first."""
    with shop_on_gitlab(tmp_path / "other", OTHER_TOKEN) as fake:
        yield fake


def two_instances(settings: Settings, other: FakeGitLab, secret: str = OTHER_SECRET) -> Settings:
    entry = GitLabInstance(
        url=other.base_url, token=SecretStr(OTHER_TOKEN), webhook_secret=SecretStr(secret)
    )
    return settings.model_copy(update={"gitlab_instances": [entry]})


def reviewed_repos(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return sorted(
            conn.execute(
                text(
                    "SELECT r.full_name FROM reviews v JOIN repositories r"
                    " ON r.id = v.repository_id WHERE v.status = 'posted'"
                )
            )
            .scalars()
            .all()
        )


def test_each_instance_is_reviewed_on_its_own_with_its_own_token(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab, other: FakeGitLab
) -> None:
    settings = two_instances(gitlab_settings, other)
    with serving(settings, engine, worker=True) as base:
        first = send_gitlab(base, MR_HOOK, mr_event("open", gitlab.mrs[7].head))
        second = send_gitlab(
            base, MR_HOOK, mr_event("open", other.mrs[7].head), secret=OTHER_SECRET
        )
        assert (first.status_code, second.status_code) == (202, 202)
        wait_for(lambda: len(gitlab.summaries(7)) == 1 and len(other.summaries(7)) == 1)
        wait_for(lambda: jobs_left(engine) == 0)
        neither = send_gitlab(base, MR_HOOK, mr_event("open", "f" * 40), secret="not-a-secret")
        assert neither.status_code == 401
    # each fake checks the token it is sent: the second instance's calls used its own
    assert any(p.endswith("/merge_requests/7/diffs") for _, p in other.requests)
    host = other.base_url.split("://", 1)[1]
    assert reviewed_repos(engine) == sorted(
        [f"{gitlab.base_url.split('://', 1)[1]}/{GITLAB_PROJECT}", f"{host}/{GITLAB_PROJECT}"]
    )


def test_a_shared_secret_is_told_apart_by_the_projects_url(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab, other: FakeGitLab
) -> None:
    shared = gitlab_settings.gitlab_webhook_secret
    assert shared is not None
    settings = two_instances(gitlab_settings, other, secret=shared.get_secret_value())
    on_other = {"project.web_url": f"{other.base_url}/{GITLAB_PROJECT}"}
    with serving(settings, engine, worker=True) as base:
        sent = send_gitlab(base, MR_HOOK, mr_event("open", other.mrs[7].head, **on_other))
        assert sent.status_code == 202
        wait_for(lambda: len(other.summaries(7)) == 1)
        wait_for(lambda: jobs_left(engine) == 0)
        elsewhere = {"project.web_url": f"https://gitlab.example.org/{GITLAB_PROJECT}"}
        unclear = send_gitlab(base, MR_HOOK, mr_event("open", "e" * 40, **elsewhere))
        assert unclear.status_code == 400 and "own secret" in unclear.json()["detail"]
    assert gitlab.summaries(7) == []
