"""The real app (uvicorn on 127.0.0.1, procrastinate workers) against a fake GitHub and a
fake model, driven by GitHub's documented webhook payloads."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from sqlalchemy import Engine, text
from sqlalchemy.engine import URL

from app.config import Settings
from tests.conftest import GITHUB_INSTALLATION, GITHUB_REPO
from tests.fakes.github_server import FakeGitHub
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.support.app import jobs_left, pr_event, send, serving, wait_for
from tests.support.workers import kill_a_worker_mid_review
from tests.webhooks import payload


def test_pull_request_lifecycle(
    github_settings: Settings, engine: Engine, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    head = github.pulls[7].head
    fake_openai.fail_next(CHAT, [500, 500])  # the model fails twice, then answers
    with serving(github_settings, engine, worker=True) as base:
        started = time.monotonic()
        first = send(base, "pull_request", pr_event("opened", head), delivery="delivery-1")
        assert first.status_code == 202 and time.monotonic() - started < 2
        wait_for(lambda: len(github.reviews) == 1)
        [review] = github.reviews
        assert [(c["path"], c["line"]) for c in review["comments"]] == [("shop/checkout.py", 7)]
        assert fake_openai.calls(CHAT, ok_only=False) - fake_openai.calls(CHAT) == 2

        again = send(base, "pull_request", pr_event("opened", head), delivery="delivery-1")
        assert again.status_code == 200 and again.json()["status"] == "duplicate"
        same_head = send(base, "pull_request", pr_event("synchronize", head))
        assert same_head.status_code == 202
        wait_for(lambda: jobs_left(engine) == 0)
        assert len(github.reviews) == 1  # no second review of the same head

        github.repo.write("shop/notes.py", "def note(text):\n    return text.strip()\n")
        new_head = github.repo.commit("Add notes")
        github.pulls[7].head = new_head
        assert send(base, "pull_request", pr_event("synchronize", new_head)).status_code == 202
        wait_for(lambda: len(github.reviews) == 2)
        assert github.reviews[1]["commit_id"] == new_head
        assert github.reviews[1]["comments"] == []  # the earlier finding is not repeated


def test_bad_requests_are_refused_and_unknown_events_ignored(
    github_settings: Settings, engine: Engine, github: FakeGitHub
) -> None:
    with serving(github_settings, engine, worker=False) as base:
        event = pr_event("opened", github.pulls[7].head)
        assert send(base, "pull_request", event, secret="wrong-secret").status_code == 401
        raw = json.dumps(event).encode()
        unsigned = httpx.post(
            f"{base}/webhooks/github",
            content=raw,
            headers={"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "x"},
        )
        assert unsigned.status_code == 401
        assert send(base, "pull_request", b"{not json").status_code == 400
        star = send(base, "star", {"action": "created", "repository": {"full_name": GITHUB_REPO}})
        assert star.status_code == 200 and star.json()["status"] == "ignored"
        ping = send(base, "ping", payload("ping"))
        assert ping.status_code == 200
        huge = httpx.post(
            f"{base}/webhooks/github",
            content=b"x" * (25 * 1024 * 1024 + 1),
            headers={"X-GitHub-Event": "push", "X-GitHub-Delivery": "big"},
            timeout=60,
        )
        assert huge.status_code == 413
    with engine.connect() as conn:
        recorded = dict(conn.execute(text("SELECT event, status FROM webhook_deliveries")).all())
    assert recorded == {"star": "ignored", "ping": "ignored"}
    assert github.reviews == []


def test_github_502_on_posting_gives_exactly_one_review(
    github_settings: Settings, engine: Engine, github: FakeGitHub
) -> None:
    github.fail_next("POST", "/pulls/7/reviews", [502], apply=True)
    with serving(github_settings, engine, worker=True) as base:
        assert (
            send(base, "pull_request", pr_event("opened", github.pulls[7].head)).status_code == 202
        )
        wait_for(lambda: jobs_left(engine) == 0 and len(github.reviews) == 1)
        time.sleep(1)
    assert len(github.reviews) == 1
    with engine.connect() as conn:
        assert conn.execute(text("SELECT status FROM reviews")).scalar_one() == "posted"


def test_worker_killed_mid_review_then_review_posted_once(
    github_settings: Settings,
    engine: Engine,
    database_url: URL,
    github: FakeGitHub,
    fake_openai: FakeOpenAI,
) -> None:
    kill_a_worker_mid_review(
        github_settings,
        engine,
        database_url,
        fake_openai,
        lambda base: (
            send(base, "pull_request", pr_event("opened", github.pulls[7].head)).status_code
        ),
        lambda: len(github.reviews) == 1,
        GITHUB_APP_ID=str(github_settings.github_app_id),
        GITHUB_APP_PRIVATE_KEY=github_settings.github_app_private_key.get_secret_value(),  # type: ignore[union-attr]
        GITHUB_API_URL=github_settings.github_api_url,
    )
    assert len(github.reviews) == 1


def index_runs(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return list(conn.execute(text("SELECT stats FROM index_runs ORDER BY id")).scalars())


def test_install_indexes_push_updates_uninstall_purges(
    github_settings: Settings, engine: Engine, github: FakeGitHub
) -> None:
    repos = [{"id": 1, "name": "shop", "full_name": GITHUB_REPO, "private": False}]
    installed = payload(
        "installation.created", repositories=repos, **{"installation.id": GITHUB_INSTALLATION}
    )
    with serving(github_settings, engine, worker=True) as base:
        assert send(base, "installation", installed).status_code == 202
        wait_for(lambda: len(index_runs(engine)) == 1)
        first = index_runs(engine)[0]
        assert first["files"]["changed"] == first["files"]["seen"] > 5
        assert first["chunks"]["added"] > 20

        github.repo.write(
            "shop/pricing.py",
            github.repo.root.joinpath("shop/pricing.py").read_text()
            + "\n\ndef round_price(value: float) -> float:\n    return round(value, 2)\n",
        )
        github.repo.commit("Add rounding")
        push = payload(
            "push",
            ref="refs/heads/main",
            deleted=False,
            **{
                "repository.full_name": GITHUB_REPO,
                "repository.default_branch": "main",
                "installation.id": GITHUB_INSTALLATION,
            },
        )
        assert send(base, "push", push).status_code == 202
        wait_for(lambda: len(index_runs(engine)) == 2)
        second = index_runs(engine)[1]
        assert second["files"]["changed"] == 1  # only pricing.py is re-chunked
        assert (second["chunks"]["added"], second["chunks"]["deleted"]) == (1, 0)
        assert second["summaries"]["calls"] == 1  # one new function, one summary

        removed = payload(
            "installation.deleted", repositories=repos, **{"installation.id": GITHUB_INSTALLATION}
        )
        assert send(base, "installation", removed).status_code == 202
        wait_for(lambda: jobs_left(engine) == 0)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM repositories")).scalar_one() == 0
        assert conn.execute(text("SELECT count(*) FROM code_chunks")).scalar_one() == 0


def test_a_first_review_comes_before_the_summaries_which_follow_in_their_own_job(
    github_settings: Settings,
    engine: Engine,
    github: FakeGitHub,
    fake_openai: FakeOpenAI,
) -> None:
    """A repository too large to summarise during a review (here: any) is reviewed from
    its chunks, links and full-text rows at once; the review says semantic search was left
    out; an ``enrich_repository`` job then makes the summaries and vectors."""
    settings = github_settings.model_copy(update={"index_inline_enrich_max": 0})
    head = github.pulls[7].head
    with serving(settings, engine, worker=True) as base:
        assert send(base, "pull_request", pr_event("opened", head)).status_code == 202
        wait_for(lambda: len(github.reviews) == 1)
        wait_for(lambda: jobs_left(engine) == 0)
    [review] = github.reviews
    assert "Semantic search was left out" in review["body"]
    assert "(0 of " in review["body"]
    assert [(c["path"], c["line"]) for c in review["comments"]] == [("shop/checkout.py", 7)]
    # the review prompt went out before any summary was asked for
    prompts = [b["messages"][-1]["content"] for b in fake_openai.bodies(CHAT)]
    first_summary = next(i for i, p in enumerate(prompts) if "### chunk " in p)
    assert first_summary > 0
    with engine.connect() as conn:
        jobs = conn.execute(
            text("SELECT task_name, status FROM procrastinate_jobs ORDER BY id")
        ).all()
        kinds = set(conn.execute(text("SELECT DISTINCT summarizer FROM code_chunks")).scalars())
        pending = conn.execute(text("SELECT enrich_pending FROM repositories")).scalar_one()
    assert ("enrich_repository", "succeeded") in [tuple(j) for j in jobs]
    assert kinds == {"llm"} and pending is False
