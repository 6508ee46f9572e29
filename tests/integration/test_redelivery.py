"""Redelivery passes against the fake GitHub's delivery log and the real database."""

from __future__ import annotations

import time

from sqlalchemy import text

from app.github.redelivery import recover_missed_deliveries
from app.runtime import Runtime
from tests.fakes.github_server import FakeGitHub
from tests.fakes.loopback import free_port
from tests.support.app import SECRET, pr_event


def test_a_redelivery_in_flight_is_not_asked_for_twice(run: Runtime, github: FakeGitHub) -> None:
    github.webhook_url = f"http://127.0.0.1:{free_port()}/webhooks/github"  # nobody listens
    github.webhook_secret = SECRET
    assert github.deliver("pull_request", pr_event("opened", github.pulls[7].head)) == 0
    assert recover_missed_deliveries(run.github, run.engine, window_hours=1) == 1
    assert recover_missed_deliveries(run.github, run.engine, window_hours=1) == 0  # in flight
    deadline = time.monotonic() + 10
    while len(github.deliveries) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [d["redelivery"] for d in github.deliveries] == [False, True]
    with run.engine.connect() as conn:
        row = conn.execute(text("SELECT event, action, status FROM webhook_deliveries")).one()
    assert tuple(row) == ("pull_request", "opened", "redelivery_requested")
    with run.engine.begin() as conn:  # ten minutes later, still not handled: ask again
        conn.execute(text("UPDATE webhook_deliveries SET processed_at = now() - interval '11m'"))
    assert recover_missed_deliveries(run.github, run.engine, window_hours=1) == 1


def test_nothing_to_redeliver_when_every_delivery_was_handled(
    run: Runtime, github: FakeGitHub
) -> None:
    github.log_delivery("ping", {"zen": "ok"}, "guid-1", 200, redelivery=False)
    with run.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO webhook_deliveries (delivery_id, event, status)"
                " VALUES ('guid-1', 'ping', 'ignored')"
            )
        )
    assert recover_missed_deliveries(run.github, run.engine, window_hours=1) == 0
    assert not any(path.endswith("/attempts") for _, path in github.requests)
