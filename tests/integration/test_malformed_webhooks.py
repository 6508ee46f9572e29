"""Validly signed but malformed webhooks are refused with 400, recorded nowhere, queued never."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import Engine, text

from app.config import Settings
from tests.conftest import MakeClient
from tests.webhooks import headers, payload

SECRET = "whsec-test-0123456789"


@pytest.fixture(scope="module")
def opened() -> dict[str, Any]:
    return payload("pull_request.opened")


@pytest.fixture
def github_intake(settings: Settings, make_client: MakeClient) -> TestClient:
    configured = settings.model_copy(update={"github_webhook_secret": SecretStr(SECRET)})
    return make_client(configured, raise_server_exceptions=False)


def post(
    github_intake: TestClient, body: bytes, event: str = "pull_request", delivery: str | None = None
) -> int:
    sent = headers(SECRET, body, event, delivery if delivery is not None else str(uuid.uuid4()))
    return github_intake.post("/webhooks/github", content=body, headers=sent).status_code


def changed(base: dict[str, Any], dotted: str, value: Any) -> bytes:
    data = json.loads(json.dumps(base))
    target = data
    *parents, last = dotted.split(".")
    for key in parents:
        target = target[key]
    target[last] = value
    return json.dumps(data).encode()


BAD_FIELDS: list[tuple[str, Any]] = [
    ("installation.id", 2**63),
    ("installation.id", -1),
    ("installation.id", "99"),
    ("installation.id", True),
    ("installation.id", 1.5),
    ("installation", [1, 2]),
    ("installation", "x"),
    ("repository", []),
    ("repository", 7),
    ("repository.full_name", 7),
    ("repository.full_name", "a/" + "b" * 300),
    ("repository.full_name", "evil/../../x"),  # would become GET /repos/evil/../../x
    ("repository.full_name", "evil/.."),
    ("repository.full_name", "no-slash"),
    ("repository.full_name", "a/b/c"),
    ("repository.full_name", "-x/shop"),
    ("repository.default_branch", ["main"]),
    ("pull_request", "7"),
    ("pull_request", [7]),
    ("pull_request.number", "7"),
    ("pull_request.number", 2**64),
    ("pull_request.number", 0),
    ("pull_request.state", {"open": True}),
    ("action", ["opened"]),
    ("action", {"a": 1}),
    ("action", 5),
    ("action", "o" * 65),
    ("ref", 1),
    ("comment", "hi"),
    ("issue", 3),
    ("repositories", "acme/shop"),
    ("repositories", [1, 2]),
    ("repositories_added", [{"full_name": 5}]),
    ("repositories_added", [{"full_name": "acme/../../x"}]),
]


@pytest.mark.parametrize(("dotted", "value"), BAD_FIELDS)
def test_wrongly_typed_or_sized_fields_are_400(
    github_intake: TestClient, engine: Engine, opened: dict[str, Any], dotted: str, value: Any
) -> None:
    assert post(github_intake, changed(opened, dotted, value)) == 400
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM webhook_deliveries")).scalar_one() == 0
        assert conn.execute(text("SELECT count(*) FROM procrastinate_jobs")).scalar_one() == 0


@pytest.mark.parametrize(
    ("body", "event", "delivery"),
    [
        (b"[" * 5000 + b"]" * 5000, "pull_request", None),  # RecursionError in json
        (b'{"a":' * 3000 + b"1" + b"}" * 3000, "pull_request", None),
        (b'"just a string"', "pull_request", None),
        (b"\xff\xfe\x00", "pull_request", None),
        (b"{}", "e" * 65, None),
        (b"{}", "Pull Request", None),
        (b"{}", "pull_request", "d" * 65),
        (b"{}", "pull_request", "bad id with spaces"),
        (b"{}", "pull_request", "../../etc"),
        (b"{}", "", None),
        (b"{}", "pull_request", ""),
    ],
)
def test_malformed_bodies_and_headers_are_400(
    github_intake: TestClient, body: bytes, event: str, delivery: str | None
) -> None:
    assert post(github_intake, body, event, delivery) == 400


def test_well_formed_edge_values_are_accepted(
    github_intake: TestClient, opened: dict[str, Any]
) -> None:
    body = changed(opened, "installation.id", 2**63 - 1)
    assert post(github_intake, body, delivery="72d3162e-cc78-11e3-81ab-4c9367dc0958") == 202
    assert post(github_intake, b"{}", event="star") == 200  # nothing to route: acknowledged
