"""Faults the job system must survive, end to end: the queueing-lock wedge, a database
outage, permanent and transient errors. Each ends with the newest head reviewed."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import URL

from app.config import Settings
from app.jobs.queue import opened_queue, recover_stalled_jobs
from tests.fakes.github_server import FakeGitHub
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.support.app import (
    SECRET,
    free_port,
    jobs_left,
    pr_event,
    send,
    serving,
    wait_for,
)
from tests.support.outage import Outage, ready

pytestmark = pytest.mark.chaos


def statuses(engine: Engine, task: str = "review_pull_request") -> list[str]:
    with engine.connect() as conn:
        return list(
            conn.execute(
                text(
                    "SELECT status::text FROM procrastinate_jobs WHERE task_name = :t ORDER BY id"
                ),
                {"t": task},
            ).scalars()
        )


def review_errors(engine: Engine) -> list[tuple[int, bool, str]]:
    """(attempt, transient, error) of every failed review run, in order."""
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT attempt, transient, error FROM job_errors"
                " WHERE task = 'review_pull_request' ORDER BY id"
            )
        ).all()
    return [(r.attempt, r.transient, r.error) for r in rows]


def new_head(github: FakeGitHub, name: str) -> str:
    github.repo.write(f"shop/{name}.py", f"def {name}(text):\n    return text.strip()\n")
    head = github.repo.commit(f"Add {name}")
    github.pulls[7].head = head
    return head


def test_newer_head_supersedes_a_retrying_review_instead_of_wedging(
    github_settings: Settings, engine: Engine, github: FakeGitHub
) -> None:
    # The review's POST is held 3 s, then answered 502; meanwhile a push queues a newer job.
    github.fail_next("POST", "/pulls/7/reviews", [502], hold_seconds=3)
    with serving(github_settings, engine, worker=True) as base:
        assert (
            send(base, "pull_request", pr_event("opened", github.pulls[7].head)).status_code == 202
        )
        assert github.held.wait(60), "the first review never reached GitHub"
        head = new_head(github, "notes")
        assert send(base, "pull_request", pr_event("synchronize", head)).status_code == 202
        cleared = time.monotonic()
        wait_for(lambda: any(r["commit_id"] == head for r in github.reviews), seconds=30)
        assert time.monotonic() - cleared < 30
        wait_for(lambda: jobs_left(engine) == 0, seconds=30)
    assert statuses(engine) == ["cancelled", "succeeded"]  # superseded, then the newest head
    assert [r["commit_id"] for r in github.reviews] == [head]


def test_stalled_job_recovery_supersedes_instead_of_crashing(
    engine: Engine, database_url: URL
) -> None:
    lock = "review:acme/shop#7"
    args = {"repo": "acme/shop", "installation_id": 99, "pr_number": 7}

    async def scenario() -> int:
        async with opened_queue(database_url) as app:
            task = app.configure_task("review_pull_request", queueing_lock=lock, lock=lock)
            await task.defer_async(**args)
            worker = await app.job_manager.register_worker()
            assert await app.job_manager.fetch_job(queues=None, worker_id=worker) is not None
            await task.defer_async(**args)  # a newer delivery while the first runs
            with engine.begin() as conn:  # then the first job's worker dies
                conn.execute(
                    text("UPDATE procrastinate_workers SET last_heartbeat = now() - interval '1h'")
                )
            return await recover_stalled_jobs(app, seconds_since_heartbeat=60)

    assert asyncio.run(scenario()) == 1
    assert statuses(engine) == ["cancelled", "todo"]


def test_permanent_error_fails_in_one_attempt_with_a_clear_error(
    github_settings: Settings, engine: Engine, github: FakeGitHub
) -> None:
    github.fail_next("GET", "/pulls/7", [404])
    with serving(github_settings, engine, worker=True) as base:
        assert (
            send(base, "pull_request", pr_event("opened", github.pulls[7].head)).status_code == 202
        )
        wait_for(lambda: statuses(engine) == ["failed"], seconds=30)
    with engine.connect() as conn:
        attempts = conn.execute(
            text("SELECT attempts FROM procrastinate_jobs WHERE task_name = 'review_pull_request'")
        ).scalar_one()
    assert attempts == 1
    assert review_errors(engine) == [(1, False, "GitHub GET /pulls/7 failed with HTTP 404")]
    assert github.reviews == []


def test_transient_errors_are_retried_until_the_review_is_posted(
    github_settings: Settings, engine: Engine, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    github.fail_next("POST", "/pulls/7/reviews", [502, 503])
    with serving(github_settings, engine, worker=True) as base:
        assert (
            send(base, "pull_request", pr_event("opened", github.pulls[7].head)).status_code == 202
        )
        wait_for(lambda: statuses(engine) == ["succeeded"], seconds=60)
    assert [(attempt, transient) for attempt, transient, _ in review_errors(engine)] == [
        (1, True),
        (2, True),
    ]
    assert len(github.reviews) == 1
    # three attempts, one review paid for: the retries reused the model's answer
    reviews_asked = [
        b for b in fake_openai.bodies(CHAT) if "### chunk" not in b["messages"][-1]["content"]
    ]
    assert len(reviews_asked) == 1


def test_worker_survives_a_database_outage(
    github_settings: Settings, github: FakeGitHub, tmp_path: Path
) -> None:
    outage = Outage(tmp_path / "outage-pg")
    try:
        with serving(github_settings, outage.engine, worker=True) as base:
            wait_for(lambda: ready(base), seconds=30)
            outage.down()
            time.sleep(10)  # the outage
            outage.up()
            cleared = time.monotonic()
            head = github.pulls[7].head
            wait_for(
                lambda: send(base, "pull_request", pr_event("opened", head)).status_code == 202,
                seconds=20,
            )
            wait_for(lambda: len(github.reviews) == 1, seconds=30)
            assert time.monotonic() - cleared < 30
            wait_for(lambda: ready(base), seconds=30)
    finally:
        outage.close()


def test_delivery_missed_while_down_is_redelivered_and_reviewed(
    github_settings: Settings, engine: Engine, github: FakeGitHub
) -> None:
    port = free_port()
    github.webhook_url = f"http://127.0.0.1:{port}/webhooks/github"
    github.webhook_secret = SECRET
    event = pr_event("opened", github.pulls[7].head)
    assert github.deliver("pull_request", event) == 0  # the bot is down: nobody answers
    github.deliver("pull_request", {**event, "action": 5})  # one it will refuse (400)...
    github.deliveries[-1]["status_code"] = 400  # ...as it did when it was up
    with serving(github_settings, engine, worker=True, port=port):
        wait_for(lambda: len(github.reviews) == 1, seconds=60)
        wait_for(lambda: jobs_left(engine) == 0, seconds=30)
    attempts = [(d["guid"], d["redelivery"], d["status_code"]) for d in github.deliveries]
    missed, refused = attempts[0][0], attempts[1][0]
    assert (missed, True, 202) in attempts  # asked for again, and accepted this time
    assert [a for a in attempts if a[0] == refused] == [(refused, False, 400)]
    with engine.connect() as conn:
        assert conn.execute(text("SELECT delivery_id FROM webhook_deliveries")).scalars().all() == [
            missed
        ]
