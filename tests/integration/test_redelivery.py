"""Redelivery passes against the fake GitHub's delivery log and the real database."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import text

from app.config import Settings
from app.github.redelivery import recover_missed_deliveries
from app.runtime import Runtime
from tests.fakes.github_server import FakeGitHub
from tests.fakes.loopback import free_port
from tests.support.app import SECRET, pr_event, serving, wait_for


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


def _handled(run: Runtime, guids: list[str]) -> None:
    """Deliveries reviewbot recorded and handled, as a busy day leaves them."""
    with run.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO webhook_deliveries (delivery_id, event, status)"
                " SELECT unnest(CAST(:g AS text[])), 'ping', 'ignored'"
            ),
            {"g": guids},
        )


def _log_pages(github: FakeGitHub) -> int:
    return sum(1 for method, path in github.requests if path == "/app/hook/deliveries")


def test_a_delivery_behind_20000_newer_ones_is_redelivered_and_handled_once(
    run: Runtime, github: FakeGitHub, github_settings: Settings
) -> None:
    with serving(github_settings, run.engine, worker=False) as base:
        github.webhook_url = f"{base}/webhooks/github"
        github.webhook_secret = SECRET
        event = pr_event("opened", github.pulls[7].head)
        github.log_delivery("pull_request", event, "missed-1", 503, redelivery=False)
        newer = [f"busy-{n}" for n in range(20_000)]
        for guid in newer:
            github.log_delivery("ping", {"zen": "busy"}, guid, 202, redelivery=False)
        _handled(run, newer)

        assert recover_missed_deliveries(run.github, run.engine, window_hours=1) == 1
        assert _log_pages(github) == 201  # read back past all 20,000, to the one missed
        wait_for(lambda: _status(run, "missed-1") == "queued", seconds=30)
        # while it was in flight the watermark stayed below it: the next pass reads back
        # to it once more, finds it handled, and asks for nothing
        assert recover_missed_deliveries(run.github, run.engine, window_hours=1) == 0
        # from then on a pass reads only what is new since
        github.log_delivery("ping", {"zen": "later"}, "later-1", 202, redelivery=False)
        _handled(run, ["later-1"])
        before = _log_pages(github)
        assert recover_missed_deliveries(run.github, run.engine, window_hours=1) == 0
        assert _log_pages(github) - before == 1
    with run.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT status FROM webhook_deliveries WHERE delivery_id = 'missed-1'")
        ).all()
        jobs = conn.execute(text("SELECT count(*) FROM procrastinate_jobs")).scalar_one()
    assert rows == [("queued",)] and jobs >= 1
    asked = [p for _, p in github.requests if p.endswith("/attempts")]
    assert asked == ["/app/hook/deliveries/1/attempts"]


def test_a_pass_that_cannot_read_back_far_enough_says_so_and_reads_it_again(
    run: Runtime, github: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    github.webhook_url = f"http://127.0.0.1:{free_port()}/webhooks/github"  # nobody listens
    github.log_delivery("pull_request", pr_event("opened", "abc"), "old-miss", 0, False)
    newer = [f"busy-{n}" for n in range(450)]
    for guid in newer:
        github.log_delivery("ping", {"zen": "busy"}, guid, 202, redelivery=False)
    _handled(run, newer)
    assert recover_missed_deliveries(run.github, run.engine, 1, max_pages=3) == 0
    assert any("webhook.redelivery_incomplete" in r.getMessage() for r in caplog.records)
    with run.engine.connect() as conn:
        marks = conn.execute(text("SELECT count(*) FROM redelivery_watermarks")).scalar_one()
    assert marks == 0  # nothing skipped is taken as read
    assert recover_missed_deliveries(run.github, run.engine, 1, max_pages=10) == 1


def _status(run: Runtime, guid: str) -> str | None:
    with run.engine.connect() as conn:
        found = conn.execute(
            text("SELECT status FROM webhook_deliveries WHERE delivery_id = :g"), {"g": guid}
        ).scalar()
    return str(found) if found is not None else None
