"""A verified delivery is acknowledged while the database cannot take it: spooled on
local disk, then recorded exactly once when the database is back. Only a full spool is
a 503, and it loses nothing it accepted."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import Engine, text
from sqlalchemy.engine import URL

from app.api.main import create_app
from app.config import Settings
from app.db.engine import DatabaseTarget, make_engine
from app.forge.spool import ReceivedDelivery, Spool
from app.task_specs import review_job
from tests.support.app import wait_for
from tests.webhooks import headers, payload

pytestmark = pytest.mark.slow

SECRET = "whsec-test-0123456789"


@pytest.fixture
def configured(settings: Settings) -> Settings:
    return settings.model_copy(update={"github_webhook_secret": SecretStr(SECRET)})


def send(client: TestClient, delivery: str, body: dict[str, Any] | None = None) -> Any:
    raw = json.dumps(body or payload("pull_request.opened")).encode()
    return client.post(
        "/webhooks/github", content=raw, headers=headers(SECRET, raw, "pull_request", delivery)
    )


def recorded(engine: Engine) -> tuple[list[str], int]:
    engine.dispose()  # connections the outage ended
    with engine.connect() as conn:
        ids = conn.execute(text("SELECT delivery_id FROM webhook_deliveries")).scalars().all()
        jobs = conn.execute(text("SELECT count(*) FROM procrastinate_jobs")).scalar_one()
    return list(ids), int(jobs)


@contextmanager
def database_away(engine: Engine, pg_server_url: URL) -> Iterator[None]:
    """No connection to this test's database, and those open are ended."""
    name = engine.url.database
    admin = make_engine(DatabaseTarget(pg_server_url, False), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
            conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = :n AND pid <> pg_backend_pid()"
                ),
                {"n": name},
            )
        yield
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
        admin.dispose()


def test_database_away_spools_and_records_once_when_back(
    configured: Settings, engine: Engine, pg_server_url: URL
) -> None:
    spool_dir = configured.data_dir / "spool"
    with TestClient(create_app(configured, engine), raise_server_exceptions=False) as client:
        with database_away(engine, pg_server_url):
            answers = [send(client, f"down-{n}") for n in range(3)]
            assert [a.status_code for a in answers] == [202, 202, 202]
            assert {a.json()["status"] for a in answers} == {"spooled"}
            assert len(list(spool_dir.glob("*.json"))) == 3
        wait_for(lambda: list(spool_dir.glob("*.json")) == [], seconds=60)
        again = send(client, "down-1")  # the host sends one again: nothing new
        assert again.status_code == 200 and again.json()["status"] == "duplicate"
    ids, jobs = recorded(engine)
    assert sorted(ids) == ["down-0", "down-1", "down-2"]
    # three deliveries of one PR's head: the jobs of one, coalesced by their queueing locks
    assert jobs == answers[0].json()["jobs"] >= 1


def test_a_full_spool_is_503_and_keeps_what_it_accepted(
    configured: Settings, engine: Engine, pg_server_url: URL
) -> None:
    small = configured.model_copy(update={"spool_max_bytes": 4096})
    spool_dir = small.data_dir / "spool"
    with TestClient(create_app(small, engine), raise_server_exceptions=False) as client:
        with database_away(engine, pg_server_url):
            codes = [send(client, f"full-{n}").status_code for n in range(30)]
            accepted = len(list(spool_dir.glob("*.json")))
        assert codes[0] == 202 and 503 in codes
        assert codes.count(202) == accepted  # each 202 is a file; each 503 was not kept
        assert codes.index(503) == accepted  # the spool filled, then refused
        wait_for(lambda: list(spool_dir.glob("*.json")) == [], seconds=60)
        after = send(client, "full-after-outage")
        assert after.status_code == 202 and after.json()["status"] == "queued"
    ids, _ = recorded(engine)
    assert sorted(ids) == sorted([f"full-{n}" for n in range(accepted)] + ["full-after-outage"])


def test_a_crash_after_spooling_and_a_redelivery_record_it_once(
    configured: Settings, engine: Engine
) -> None:
    """The process died after the spool write and before answering: the host sends the
    delivery again, and the drainer later finds the file. One delivery, one job."""
    spool = Spool(configured.data_dir / "spool", configured.spool_max_bytes)
    body = payload("pull_request.opened")
    job = review_job(body["repository"]["full_name"], body["installation"]["id"], body["number"])
    spool.put(
        ReceivedDelivery(
            "crashed",
            "pull_request",
            "opened",
            body["repository"]["full_name"],
            body["installation"]["id"],
            (job,),
        )
    )
    with TestClient(create_app(configured, engine), raise_server_exceptions=False) as client:
        answer = send(client, "crashed", body)
        assert answer.status_code in (200, 202)
        wait_for(lambda: spool.pending() == [], seconds=30)
    ids, jobs = recorded(engine)
    assert ids == ["crashed"] and jobs == answer.json().get("jobs", 1)


def test_a_locked_deliveries_table_is_answered_in_time_and_recorded_after(
    configured: Settings, engine: Engine
) -> None:
    """A migration or maintenance statement holds ACCESS EXCLUSIVE on the deliveries
    table: the intake gives up on the lock in time, spools, and the drainer records the
    delivery once the lock is gone."""
    holding = threading.Event()
    release = threading.Event()

    def hold_lock() -> None:
        with engine.begin() as conn:
            conn.execute(text("LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE"))
            holding.set()
            release.wait(30)

    with TestClient(create_app(configured, engine), raise_server_exceptions=False) as client:
        locker = threading.Thread(target=hold_lock)
        locker.start()
        assert holding.wait(10)
        try:
            started = time.monotonic()
            answer = send(client, str(uuid.uuid4()))
            took = time.monotonic() - started
            started = time.monotonic()
            second = send(client, str(uuid.uuid4()))  # the intake knows: straight to disk
            took_second = time.monotonic() - started
        finally:
            release.set()
            locker.join(30)
        assert answer.status_code == 202 and answer.json()["status"] == "spooled"
        assert took < 9  # inside GitHub's 10 s
        assert second.json()["status"] == "spooled" and took_second < 1.5
        wait_for(lambda: len(recorded(engine)[0]) == 2, seconds=30)
    ids, _ = recorded(engine)
    assert len(ids) == 2


def test_an_unreadable_spool_file_is_set_aside_not_retried(
    configured: Settings, engine: Engine
) -> None:
    spool_dir: Path = configured.data_dir / "spool"
    spool_dir.mkdir(parents=True)
    (spool_dir / "00000000000000000001-broken.json").write_text("{not json")
    with TestClient(create_app(configured, engine), raise_server_exceptions=False):
        wait_for(lambda: (spool_dir / "failed" / "00000000000000000001-broken.json").exists(), 30)
    assert list(spool_dir.glob("*.json")) == []


def test_a_round_that_fails_does_not_end_the_drainer(configured: Settings, engine: Engine) -> None:
    """A spool folder that cannot be listed for a while (permissions, a full disk) logs
    and retries; the deliveries are recorded once it can be read again."""
    spool_dir: Path = configured.data_dir / "spool"
    spool = Spool(spool_dir, configured.spool_max_bytes)
    body = payload("pull_request.opened")
    repo, installation = body["repository"]["full_name"], body["installation"]["id"]
    spool.put(ReceivedDelivery("later-1", "pull_request", "opened", repo, installation, ()))
    hidden = spool_dir.with_name("spool-away")
    spool_dir.rename(hidden)
    spool_dir.write_text("not a folder")  # listing it fails with NotADirectoryError
    with TestClient(create_app(configured, engine), raise_server_exceptions=False):
        time.sleep(3)  # a round or two fail
        spool_dir.unlink()
        hidden.rename(spool_dir)
        wait_for(lambda: recorded(engine)[0] == ["later-1"], seconds=30)
