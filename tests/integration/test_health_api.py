import time

from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from app.api.main import create_app
from app.config import Settings
from app.db.engine import DatabaseTarget, make_engine, parse_database_url
from tests.support.app import wait_for


def test_healthz_reports_postgres_and_pgvector(settings: Settings, engine: Engine) -> None:
    with TestClient(create_app(settings, engine, worker=True)) as client:
        response = client.get("/healthz")
        wait_for(lambda: client.get("/readyz").status_code == 200, seconds=20)
        ready = client.get("/readyz")
    body = ready.json()
    assert (body["status"], body["workers"], body["jobs_stuck_doing"]) == ("ok", 1, 0)
    assert 0 <= body["oldest_runnable_job_seconds"] < 5  # periodic jobs come and go
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


def test_readyz_fails_without_a_live_worker(settings: Settings, engine: Engine) -> None:
    with TestClient(create_app(settings, engine, worker=False)) as client:
        ready = client.get("/readyz")
    assert ready.status_code == 503
    assert "no job worker sent a heartbeat" in ready.json()["error"]


def test_readyz_fails_when_a_runnable_job_waits_too_long(
    settings: Settings, engine: Engine
) -> None:
    patient = settings.model_copy(update={"ready_max_job_age_seconds": 0.5})
    with engine.begin() as conn:  # a worker that is alive but does not take the job
        conn.execute(text("INSERT INTO procrastinate_workers DEFAULT VALUES"))
    with TestClient(create_app(patient, engine, worker=False)) as client:
        assert client.get("/readyz").status_code == 200
        client.app.state.queue.configure_task("purge_repository").defer(repo="acme/shop")  # type: ignore[attr-defined]
        time.sleep(1.0)
        ready = client.get("/readyz")
        metrics = client.get("/metrics").text
    assert ready.status_code == 503
    assert "the oldest runnable job has waited" in ready.json()["error"]
    assert "reviewbot_workers_alive 1.0" in metrics
    assert "reviewbot_jobs_stuck_doing 0.0" in metrics


def test_a_heartbeat_from_before_the_database_restarted_is_no_live_worker(
    settings: Settings, engine: Engine
) -> None:
    """Right after PostgreSQL comes back, the last heartbeats are from before the outage:
    recent, but from workers that may still be stopped."""
    patient = settings.model_copy(update={"stalled_worker_seconds": 10 * 24 * 3600.0})
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO procrastinate_workers (last_heartbeat)"
                " VALUES (pg_postmaster_start_time() - interval '1 second')"
            )
        )
    with TestClient(create_app(patient, engine, worker=False)) as client:
        stale = client.get("/readyz")
        with engine.begin() as conn:  # the worker is back: it beats after the restart
            conn.execute(text("UPDATE procrastinate_workers SET last_heartbeat = now()"))
        fresh = client.get("/readyz")
    assert stale.status_code == 503 and "no job worker sent a heartbeat" in stale.json()["error"]
    assert fresh.status_code == 200


def test_a_worker_that_missed_its_beats_is_not_counted_long_before_its_jobs_are_taken(
    settings: Settings, engine: Engine
) -> None:
    """A worker killed with -9 stops beating: readiness counts it dead after three missed
    intervals (30 s at the default 60 s), not after the whole stalled-worker period."""
    assert settings.stalled_worker_seconds == 60 and settings.worker_alive_seconds == 30
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO procrastinate_workers (last_heartbeat)"
                " VALUES (now() - interval '35 seconds')"
            )
        )
    with TestClient(create_app(settings, engine, worker=False)) as client:
        gone = client.get("/readyz")
        with engine.begin() as conn:
            conn.execute(
                text("UPDATE procrastinate_workers SET last_heartbeat = now() - interval '2 s'")
            )
        beating = client.get("/readyz")
    assert gone.status_code == 503
    assert "no job worker sent a heartbeat in the last 30 s" in gone.json()["error"]
    assert beating.status_code == 200
