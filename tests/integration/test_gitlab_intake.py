"""``POST /webhooks/gitlab`` through the real app: the secret token, the headers and the
payload are checked before anything is recorded; bad requests get 400/401/413 and never
500; a good delivery is recorded once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import Engine, text

from app.api.main import create_app
from app.config import Settings
from tests.conftest import MakeClient
from tests.webhooks import gitlab_headers, payload

SECRET = "gl-webhook-secret-0123456789"
MR = "Merge Request Hook"
PROJECT = {"project.id": 15, "project.path_with_namespace": "acme/shop"}


@pytest.fixture
def gitlab_intake(settings: Settings, make_client: MakeClient) -> TestClient:
    configured = settings.model_copy(
        update={"gitlab_webhook_secret": SecretStr(SECRET), "gitlab_url": "https://gl.example"}
    )
    return make_client(configured, raise_server_exceptions=False)


def post(gitlab_intake: TestClient, body: bytes, **headers: str) -> int:
    sent = {**gitlab_headers(SECRET, MR, headers.pop("delivery", "d-1")), **headers}
    return gitlab_intake.post("/webhooks/gitlab", content=body, headers=sent).status_code


def recorded(engine: Engine) -> list[tuple[str, str, str | None]]:
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT delivery_id, event, repository_full_name FROM webhook_deliveries")
        ).all()
    return [tuple(r) for r in rows]


def test_bad_requests_are_refused_before_anything_is_recorded(
    gitlab_intake: TestClient, engine: Engine
) -> None:
    good = json.dumps(payload("gitlab/merge-request-event", **PROJECT)).encode()
    assert post(gitlab_intake, good, **{"X-Gitlab-Token": "wrong"}) == 401
    sent = gitlab_headers(SECRET, MR, "d-2")
    del sent["X-Gitlab-Token"]
    assert gitlab_intake.post("/webhooks/gitlab", content=good, headers=sent).status_code == 401
    assert post(gitlab_intake, good, delivery="") == 400  # no event UUID
    assert post(gitlab_intake, good, **{"X-Gitlab-Event": "Merge\nRequest"}) == 400
    assert post(gitlab_intake, b"{not json") == 400
    assert post(gitlab_intake, b"[1, 2]") == 400
    assert post(gitlab_intake, b"[" * 100_000) == 400  # nested too deeply
    assert post(gitlab_intake, b"x" * (25 * 1024 * 1024 + 1)) == 413
    assert recorded(engine) == []


BAD: list[tuple[str, Any]] = [
    ("project.id", "15"),
    ("project.id", 0),
    ("project.path_with_namespace", "/etc/passwd"),
    ("project.path_with_namespace", "a" * 300 + "/b"),
    ("object_attributes.iid", -3),
    ("object_attributes.oldrev", {"x": 1}),
    ("object_attributes", None),
    ("changes", "all"),
    ("user", ["root"]),
    ("ref", 7),
]


def test_malformed_payloads_get_400_and_never_500(
    gitlab_intake: TestClient, engine: Engine
) -> None:
    statuses = []
    for i, (dotted, value) in enumerate(BAD):
        data = payload("gitlab/merge-request-event", **{**PROJECT, dotted: value})
        statuses.append(post(gitlab_intake, json.dumps(data).encode(), delivery=f"bad-{i}"))
    # object_attributes None is not malformed: the event has nothing to act on
    assert statuses.count(400) == len(BAD) - 1 and 500 not in statuses
    assert [r[0] for r in recorded(engine)] == [f"bad-{BAD.index(('object_attributes', None))}"]


def test_a_delivery_is_recorded_once_under_its_idempotency_key(
    gitlab_intake: TestClient, engine: Engine
) -> None:
    body = json.dumps(payload("gitlab/merge-request-event", **PROJECT)).encode()
    retried = {"Idempotency-Key": "idem-1"}
    first = gitlab_intake.post(
        "/webhooks/gitlab", content=body, headers={**gitlab_headers(SECRET, MR, "u-1"), **retried}
    )
    again = gitlab_intake.post(
        "/webhooks/gitlab", content=body, headers={**gitlab_headers(SECRET, MR, "u-2"), **retried}
    )
    assert (first.status_code, first.json()["jobs"]) == (202, 2)  # review and describe
    assert (again.status_code, again.json()["status"]) == (200, "duplicate")
    assert recorded(engine) == [("idem-1", "merge_request", "gl.example/acme/shop")]


def test_without_a_secret_gitlab_webhooks_are_off(settings: Settings, engine: Engine) -> None:
    with TestClient(create_app(settings, engine), raise_server_exceptions=False) as plain:
        body = json.dumps(payload("gitlab/merge-request-event", **PROJECT)).encode()
        answer = plain.post(
            "/webhooks/gitlab", content=body, headers=gitlab_headers(SECRET, MR, "x")
        )
    # 404, not 503: GitLab disables a hook after failures, and this is a setting, not an outage
    assert answer.status_code == 404 and "GITLAB_WEBHOOK_SECRET" in answer.json()["detail"]


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("Push Hook", "does not match object_kind 'merge_request'"),
        ("Totally Unknown Hook", "does not match object_kind 'merge_request'"),
        ("System Hook", "system hooks are not supported"),
    ],
)
def test_an_event_header_that_disagrees_with_the_body_is_refused(
    gitlab_intake: TestClient, engine: Engine, header: str, said: str
) -> None:
    body = json.dumps(payload("gitlab/merge-request-event", **PROJECT)).encode()
    sent = gitlab_headers(SECRET, header, "mismatch-1")
    answer = gitlab_intake.post("/webhooks/gitlab", content=body, headers=sent)
    assert answer.status_code == 400 and said in answer.json()["detail"]
    assert recorded(engine) == []


def test_a_project_path_too_long_for_the_key_is_400_not_503(
    gitlab_intake: TestClient, engine: Engine
) -> None:
    """GitLab allows long paths in deep groups; with the instance's name in front, the key
    can pass what reviewbot stores. Refused with a message, never a database error."""
    deep = "/".join(["g" * 60] * 4) + "/p"  # 245 characters: a path GitLab allows
    body = json.dumps(
        payload(
            "gitlab/merge-request-event",
            **{"project.id": 15, "project.path_with_namespace": deep},
        )
    ).encode()
    answer = gitlab_intake.post(
        "/webhooks/gitlab", content=body, headers=gitlab_headers(SECRET, MR, "long-1")
    )
    assert answer.status_code == 400
    assert "project path too long" in answer.json()["detail"]
    assert recorded(engine) == []
