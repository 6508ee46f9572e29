"""Dashboard page times with 1,000 repositories and 100,000 reviews (issue: the operator's
dashboard; target under 200 ms a page).

A fresh embedded PostgreSQL is migrated and filled by SQL: 1,000 repositories of a long
tail of sizes (900 of 300 chunks, 90 of 2,000-10,000, 10 of 50,000-100,000; their files
and 20 index runs each), 100,000 reviews over 30 days (more on the large repositories),
100,000 finished review jobs plus failed and waiting ones, and model usage for every
repository and day. The real app is served by uvicorn on 127.0.0.1; one signed-in
client fetches each page ``--rounds`` times after two warm-up fetches, and the time
from request to last byte is reported (p50, p95, max).

    python -W ignore -m bench.dashboard_bench [--rounds 30]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from pydantic import SecretStr
from sqlalchemy import Engine, text

from app.config import Settings
from app.db.embedded import start_embedded_server
from app.db.engine import DatabaseTarget, make_engine
from app.db.migrate import upgrade
from tests.support.app import serving

TOKEN = "bench-admin-token-0123456789"
REPOSITORIES = 1000
REVIEWS = 100_000
JOBS = 100_000


def repository_sizes() -> list[int]:
    """Chunks per repository: a long tail."""
    sizes = [300] * 900
    sizes += [2_000 + (8_000 * i) // 89 for i in range(90)]
    sizes += [50_000 + (50_000 * i) // 9 for i in range(10)]
    return sizes


def fill(engine: Engine) -> dict[str, int]:
    sizes = repository_sizes()
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO repositories (full_name, installation_id, default_branch,"
                " last_indexed_commit) SELECT format('org%s/repo-%s', n % 40, n), 1000 + n % 40,"
                " 'main', md5(n::text) FROM generate_series(1, :n) n"
            ),
            {"n": REPOSITORIES},
        )
        conn.execute(
            text(
                "CREATE TEMP TABLE sizes AS SELECT ord AS id, size"
                " FROM unnest(CAST(:s AS int[])) WITH ORDINALITY AS t(size, ord)"
            ),
            {"s": sizes},
        )
        conn.execute(
            text(
                "INSERT INTO source_files (repository_id, path, content_hash, language, size_bytes)"
                " SELECT s.id, format('src/m%s.py', f), md5(f::text),"
                " (ARRAY['python','go','typescript','java','rust'])[1 + f % 5], 4000"
                " FROM sizes s, generate_series(1, greatest(s.size / 8, 1)) f"
            )
        )
        conn.execute(
            text(
                "INSERT INTO index_runs (repository_id, status, commit_sha, stats, wall_seconds,"
                " started_at, finished_at)"
                " SELECT s.id, CASE WHEN k % 10 = 0 THEN 'failed' ELSE 'succeeded' END,"
                " md5(k::text), jsonb_build_object('files', jsonb_build_object('changed', k,"
                " 'deleted', 0, 'skipped', jsonb_build_object('binary', 2, 'too large', 1)),"
                " 'chunks', jsonb_build_object('added', k, 'updated', 1, 'deleted', 0,"
                " 'total', s.size)), 12.5, now() - make_interval(hours => 20 * (20 - k)),"
                " now() - make_interval(hours => 20 * (20 - k))"
                " FROM sizes s, generate_series(1, 20) k"
            )
        )
        conn.execute(
            text(
                "INSERT INTO reviews (repository_id, pr_number, base_sha, head_sha, status,"
                " comment_count, model, prompt_tokens, completion_tokens, created_at, finished_at)"
                " SELECT 1 + ((n * 7919) % :repos) * ((n % 3) + 1) % :repos, n, md5('b' || n),"
                " md5('h' || n), (ARRAY['posted','posted','posted','skipped','failed'])[1 + n % 5],"
                " n % 6, 'gpt-4o', 9000 + n % 1000, 400,"
                " now() - make_interval(secs => (:n - n) * 26),"
                " now() - make_interval(secs => (:n - n) * 26 - 30 - n % 60)"
                " FROM generate_series(1, :n) n"
            ),
            {"n": REVIEWS, "repos": REPOSITORIES},
        )
        conn.execute(
            text(
                "INSERT INTO procrastinate_jobs (queue_name, task_name, args, status, attempts)"
                " SELECT 'default', 'review_pull_request', jsonb_build_object('repo',"
                " format('org%s/repo-%s', n % 40, n % 1000 + 1), 'installation_id', 1000,"
                " 'pr_number', n), CASE WHEN n % 500 = 0 THEN 'failed' ELSE 'succeeded' END"
                "::procrastinate_job_status, 1 FROM generate_series(1, :n) n"
            ),
            {"n": JOBS},
        )
        conn.execute(
            text(
                "INSERT INTO job_errors (job_id, task, attempt, transient, error)"
                " SELECT id, task_name, 1, false, 'GitHub answered 502' FROM procrastinate_jobs"
                " WHERE status = 'failed'"
            )
        )
        conn.execute(
            text(
                "INSERT INTO procrastinate_jobs (queue_name, task_name, args)"
                " SELECT 'default', 'index_repository', jsonb_build_object('repo',"
                " format('org%s/repo-%s', n % 40, n), 'installation_id', 1000, 'full', false)"
                " FROM generate_series(1, 50) n"
            )
        )
        conn.execute(
            text(
                "INSERT INTO model_usage (day, repository_id, purpose, model, calls, input_tokens,"
                " output_tokens) SELECT current_date - d, r, p, m, 10, 90000, 4000"
                " FROM generate_series(0, 29) d, generate_series(1, :repos) r,"
                " (VALUES ('review', 'gpt-4o'), ('embedding', 'text-embedding-3-small'),"
                " ('summary', 'gpt-4o-mini')) AS u(p, m)"
            ),
            {"repos": REPOSITORIES},
        )
        conn.execute(text("ANALYZE"))
        return {
            table: conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in (
                "repositories",
                "source_files",
                "index_runs",
                "reviews",
                "procrastinate_jobs",
                "model_usage",
            )
        }


def pages(engine: Engine) -> dict[str, str]:
    with engine.connect() as conn:
        biggest = conn.execute(
            text("SELECT repository_id FROM source_files GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
        ).scalar_one()
        name = conn.execute(
            text("SELECT full_name FROM repositories WHERE id = :i"), {"i": biggest}
        ).scalar_one()
    return {
        "overview": "/admin",
        "repositories": "/admin/repositories",
        "repositories, page 10": "/admin/repositories?after=org8/repo-448",
        "repository (largest)": f"/admin/repositories/{biggest}",
        "reviews": "/admin/reviews",
        "reviews, 1,500 pages in": "/admin/reviews?before=25000",
        "reviews of one repository": f"/admin/reviews?repo={name}",
        "jobs": "/admin/jobs",
        "jobs, failed": "/admin/jobs?status=failed",
        "jobs, succeeded, deep page": "/admin/jobs?status=succeeded&before=20000",
    }


def timed(client: httpx.Client, path: str, rounds: int) -> list[float]:
    for _ in range(2):
        assert client.get(path).status_code == 200, path
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        answer = client.get(path)
        times.append((time.perf_counter() - began) * 1000)
        assert answer.status_code == 200, path
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = start_embedded_server(Path(tmp) / "data")
        engine = make_engine(DatabaseTarget(url, True))
        upgrade(engine)
        began = time.perf_counter()
        rows = fill(engine)
        fill_s = time.perf_counter() - began
        settings = Settings(
            database_url=SecretStr(url.render_as_string(hide_password=False)),
            data_dir=Path(tmp) / "data",
            admin_token=SecretStr(TOKEN),
            embedding_provider="hash",
        )
        results = {}
        with serving(settings, engine, worker=False) as site, httpx.Client(base_url=site) as client:
            form = client.get("/admin/login").text
            csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
            client.post("/admin/login", data={"token": TOKEN, "csrf": csrf})
            for label, path in pages(engine).items():
                times = sorted(timed(client, path, args.rounds))
                results[label] = {
                    "path": path,
                    "p50_ms": round(statistics.median(times), 1),
                    "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
                    "max_ms": round(times[-1], 1),
                }
        engine.dispose()
    print(json.dumps({"rows": rows, "fill_s": round(fill_s, 1), "pages": results}, indent=2))


if __name__ == "__main__":
    main()
