"""POST /reindex, GET /reindex/{id} and /metrics through the real app and database."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import Engine, text

from app.api.main import create_app
from app.config import Settings
from tests.conftest import MakeClient

TOKEN = "admin-token-0123456789"


@pytest.fixture
def admin_api(settings: Settings, engine: Engine, make_client: MakeClient) -> TestClient:
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO repositories (full_name, installation_id) VALUES ('acme/shop', 99)")
        )
    return make_client(settings.model_copy(update={"admin_token": SecretStr(TOKEN)}))


def auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_reindex_requires_the_admin_token(admin_api: TestClient) -> None:
    assert admin_api.post("/reindex", json={"repo": "acme/shop"}).status_code == 401
    assert (
        admin_api.post("/reindex", json={"repo": "acme/shop"}, headers=auth("nope")).status_code
        == 403
    )
    assert admin_api.get("/reindex/1", headers=auth("nope")).status_code == 403


def test_reindex_is_disabled_without_a_token(settings: Settings, engine: Engine) -> None:
    with TestClient(create_app(settings, engine)) as plain:
        response = plain.post("/reindex", json={"repo": "acme/shop"}, headers=auth())
    assert response.status_code == 503
    assert "REVIEWBOT_ADMIN_TOKEN" in response.json()["detail"]


def test_reindex_queues_one_job_and_reports_it(admin_api: TestClient, engine: Engine) -> None:
    assert admin_api.post("/reindex", json={"repo": "acme/nope"}, headers=auth()).status_code == 404
    assert (
        admin_api.post("/reindex", json={"repo": "not a repo"}, headers=auth()).status_code == 422
    )

    first = admin_api.post("/reindex", json={"repo": "acme/shop", "full": False}, headers=auth())
    again = admin_api.post("/reindex", json={"repo": "acme/shop"}, headers=auth())
    assert first.status_code == again.status_code == 202
    job_id = first.json()["job_id"]
    assert again.json()["job_id"] == job_id  # coalesced with the queued one

    status = admin_api.get(f"/reindex/{job_id}", headers=auth())
    assert status.status_code == 200
    assert status.json() == {
        "job_id": job_id,
        "status": "todo",
        "attempts": 0,
        "repo": "acme/shop",
        "last_index": None,
        "last_error": None,
        "last_error_transient": None,
    }
    assert admin_api.get("/reindex/999999", headers=auth()).status_code == 404
    with engine.connect() as conn:
        args = conn.execute(
            text("SELECT args FROM procrastinate_jobs WHERE id = :i"), {"i": job_id}
        ).scalar_one()
    assert args == {"repo": "acme/shop", "installation_id": 99, "full": False}


def test_reindex_status_shows_the_last_error(admin_api: TestClient, engine: Engine) -> None:
    job_id = admin_api.post("/reindex", json={"repo": "acme/shop"}, headers=auth()).json()["job_id"]
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO job_errors (job_id, task, attempt, transient, error) VALUES"
                " (:j, 'index_repository', 1, true, 'GitHub GET /tarball/main: HTTP 502'),"
                " (:j, 'index_repository', 2, false, 'the archive has more than 10 members')"
            ),
            {"j": job_id},
        )
    status = admin_api.get(f"/reindex/{job_id}", headers=auth()).json()
    assert status["last_error"] == "the archive has more than 10 members"
    assert status["last_error_transient"] is False


def test_metrics_in_prometheus_format(admin_api: TestClient, engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO webhook_deliveries (delivery_id, event, status)"
                " VALUES ('a', 'star', 'ignored'), ('b', 'star', 'ignored')"
            )
        )
    admin_api.post("/reindex", json={"repo": "acme/shop"}, headers=auth())
    body = admin_api.get("/metrics").text
    assert 'reviewbot_webhooks_total{event="star",outcome="ignored"} 2.0' in body
    assert 'reviewbot_jobs{state="todo",task="index_repository"} 1.0' in body
    assert "reviewbot_review_latency_seconds_count 0.0" in body
    assert "reviewbot_index_model_tokens_total 0.0" in body


def test_a_gitlab_project_is_reindexed_by_its_key(admin_api: TestClient, engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO repositories (full_name, installation_id)"
                " VALUES ('gitlab.com/acme/sub/shop', 15)"
            )
        )
    queued = admin_api.post("/reindex", json={"repo": "gitlab.com/acme/sub/shop"}, headers=auth())
    assert queued.status_code == 202
    with engine.connect() as conn:
        args = conn.execute(
            text("SELECT args FROM procrastinate_jobs WHERE id = :i"),
            {"i": queued.json()["job_id"]},
        ).scalar_one()
    assert (args["repo"], args["installation_id"]) == ("gitlab.com/acme/sub/shop", 15)
