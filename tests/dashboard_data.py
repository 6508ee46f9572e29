"""A database the dashboard's tests can look at: two repositories (one from the GitHub
App, indexed for real; one from the CLI), index runs, reviews in every status, model
usage over two weeks and jobs in every state, with secrets configured that no page may
show."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr
from sqlalchemy import Connection, Engine, text

from app.config import Settings
from tests.shop_repo import make_history
from tests.support.indexing import index_tree

ADMIN_TOKEN = "admin-token-for-the-dashboard-7f3a9c"
WEBHOOK_SECRET = "webhook-secret-d41d8cd98f00b204"
OPENAI_KEY = "sk-dashboard-test-key-5e884898da28047151d0e56f"
#: Every secret configured; the tests look for each in every page's HTML.
SECRETS = (ADMIN_TOKEN, WEBHOOK_SECRET, OPENAI_KEY)
SHOP = "acme/shop"
CLI_REPO = "local/tools"
INSTALLATION = 4242


@dataclass(frozen=True)
class Seeded:
    shop_id: int
    cli_id: int
    failed_job: int
    todo_job: int
    stuck_job: int
    succeeded_job: int


def dashboard_settings(settings: Settings) -> Settings:
    """``settings`` with the admin token and other secrets set, searching with the hash
    embedder (the model endpoint is never called)."""
    return settings.model_copy(
        update={
            "admin_token": SecretStr(ADMIN_TOKEN),
            "github_webhook_secret": SecretStr(WEBHOOK_SECRET),
            "openai_api_key": SecretStr(OPENAI_KEY),
            "openai_base_url": "http://127.0.0.1:9/v1",
            "embedding_provider": "hash",
            "model_prices": {"llama-local": (0.5, 1.0)},
        }
    )


def seed(engine: Engine, workdir: Path, reviews: int = 3) -> Seeded:
    repo, _ = make_history(workdir / "shop")
    index_tree(engine, repo.root, SHOP)
    with engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE repositories SET installation_id = :i, default_branch = 'main'"
                " WHERE full_name = :n"
            ),
            {"i": INSTALLATION, "n": SHOP},
        )
        shop_id = conn.execute(
            text("SELECT id FROM repositories WHERE full_name = :n"), {"n": SHOP}
        ).scalar_one()
        cli_id = conn.execute(
            text("INSERT INTO repositories (full_name) VALUES (:n) RETURNING id"), {"n": CLI_REPO}
        ).scalar_one()
        stats = {
            "files": {"changed": 2, "deleted": 1, "skipped": {"binary": 3, "too large": 1}},
            "chunks": {"added": 5, "updated": 1, "deleted": 2},
        }
        conn.execute(
            text(
                "INSERT INTO index_runs (repository_id, status, commit_sha, stats, wall_seconds,"
                " error, started_at, finished_at) VALUES (:r, 'failed', :c, CAST(:s AS jsonb), 3.5,"
                " 'tools/broken.py: not UTF-8', now() + interval '1 minute', now())"
            ),
            {"r": shop_id, "c": "c0ffee" + "0" * 34, "s": json.dumps(stats)},
        )
        for n in range(reviews):
            status = ("posted", "skipped", "failed", "posting")[n % 4]
            conn.execute(
                text(
                    "INSERT INTO reviews (repository_id, pr_number, base_sha, head_sha, status,"
                    " comment_count, model, prompt_tokens, completion_tokens, created_at,"
                    " finished_at) VALUES (:r, :p, 'b', :h, :s, :c, 'gpt-4o', 1200, 300,"
                    " now() - make_interval(mins => :m), now() - make_interval(mins => :m)"
                    " + CAST(:took AS interval))"
                ),
                {
                    "r": shop_id,
                    "p": 100 + n,
                    "h": f"{n:040x}",
                    "s": status,
                    "c": n % 5,
                    "m": n,
                    "took": None if status == "posting" else "42 seconds",
                },
            )
        for day, model, calls, tokens_in, tokens_out in (
            (0, "gpt-4o", 3, 400_000, 50_000),
            (0, "llama-local", 2, 1_000_000, 0),
            (1, "text-embedding-3-small", 10, 2_000_000, 0),
            (5, "mystery-model", 1, 7_000, 0),
            (20, "gpt-4o", 99, 9_000_000, 0),  # older than the chart
        ):
            conn.execute(
                text(
                    "INSERT INTO model_usage (day, repository_id, purpose, model, calls,"
                    " input_tokens, output_tokens) VALUES (current_date - :d, :r, 'review', :m,"
                    " :c, :i, :o)"
                ),
                {"d": day, "r": shop_id, "m": model, "c": calls, "i": tokens_in, "o": tokens_out},
            )
        jobs = {
            status: _job(
                conn,
                status,
                {
                    "repo": SHOP,
                    "installation_id": INSTALLATION,
                    "full": False,
                    "api_token": "never-shown-in-a-page",
                }
                if status == "todo"
                else {"repo": SHOP, "installation_id": INSTALLATION, "pr_number": 7},
            )
            for status in ("failed", "todo", "doing", "succeeded")
        }
        conn.execute(
            text(
                "INSERT INTO job_errors (job_id, task, attempt, transient, error)"
                " VALUES (:j, 'review_pull_request', 1, false, 'GitHub answered 502 Bad Gateway')"
            ),
            {"j": jobs["failed"]},
        )
    return Seeded(shop_id, cli_id, jobs["failed"], jobs["todo"], jobs["doing"], jobs["succeeded"])


def _job(conn: Connection, status: str, args: dict[str, object]) -> int:
    """A job row as procrastinate would leave it (its triggers add the 'deferred' event);
    ``doing`` has no worker: it died."""
    task = "index_repository" if "api_token" in args else "review_pull_request"
    job_id = conn.execute(
        text(
            "INSERT INTO procrastinate_jobs (queue_name, task_name, args)"
            " VALUES ('default', :t, CAST(:a AS jsonb)) RETURNING id"
        ),
        {"t": task, "a": json.dumps(args)},
    ).scalar_one()
    if status != "todo":
        conn.execute(
            text(
                "UPDATE procrastinate_jobs SET status = CAST(:s AS procrastinate_job_status),"
                " attempts = 1 WHERE id = :j"
            ),
            {"s": status, "j": job_id},
        )
    return int(job_id)


def csrf_of(html: str) -> str:
    """The CSRF token of the first form on a page."""
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)
