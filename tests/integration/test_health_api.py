from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.api.main import create_app
from app.config import Settings
from app.db.engine import DatabaseTarget, make_engine, parse_database_url


def test_healthz_reports_postgres_and_pgvector(settings: Settings, engine: Engine) -> None:
    with TestClient(create_app(settings, engine)) as client:
        response = client.get("/healthz")
        ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json() == {"status": "ok"}
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert int(body["database"]["postgres"].split(".")[0]) >= 14
    assert body["database"]["pgvector"].count(".") == 2


def test_healthz_is_503_when_database_is_down(settings: Settings, engine: Engine) -> None:
    dead = make_engine(DatabaseTarget(parse_database_url("postgresql://u:pw@127.0.0.1:1/x"), False))
    # the database goes away after start-up: the queue opened, the engine now fails
    with TestClient(create_app(settings, dead, queue_url=engine.url)) as client:
        response = client.get("/healthz")
        ready = client.get("/readyz")
    assert ready.status_code == 503
    assert response.status_code == 503
    assert response.json()["database"]["ok"] is False
    assert "pw" not in response.text
