"""From installing the App to the first posted review, on a repository of over 100,000
chunks, with a model that takes a second per call (issue 31).

A git repository is made from the Python files of the largest packages in this
interpreter's site-packages (real code, enough of it); its first commit is the default
branch, and a second commit (one function changed) is the head of PR 1. Everything runs
on 127.0.0.1: a fresh embedded PostgreSQL, the fake GitHub of the tests serving that
repository (tarball, compare, git smart HTTP for the history), the fake model with
``generation_seconds`` per call (summaries and the review alike; embeddings at once), and
the app (uvicorn and its in-process workers, as `reviewbot serve` runs them).

The clock starts when the ``installation`` webhook is sent; the PR's ``opened`` webhook
follows at once, as when the App is installed on a repository with an open PR. It stops
when the review is on the fake GitHub. Then it reports what the background enrichment had
done by then, and how fast it goes on.

    python -W ignore -m bench.first_review [--definitions 63000] [--model-seconds 1.0]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sysconfig
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from sqlalchemy import Engine, text

from app.config import Settings
from app.db.embedded import start_embedded_server
from app.db.engine import DatabaseTarget, make_engine
from app.db.migrate import upgrade
from tests.fakes.github_server import PullState, running_fake_github
from tests.fakes.openai_server import running_fake_openai, summaries_for
from tests.gitrepo import GitRepo
from tests.keys import rsa_key_pair
from tests.support.app import serving
from tests.webhooks import headers, payload

REPO, INSTALLATION, APP_ID = "bench/big", 7, 42
SECRET = "bench-webhook-secret-0123456789"
DEFINITION = re.compile(rb"^\s*(?:async\s+def|def|class)\s", re.M)


def make_repository(root: Path, chunks: int) -> tuple[GitRepo, str, str, int]:
    """The largest site-packages packages' .py files, until about ``chunks`` definitions;
    (repo, base, head, estimated chunks)."""
    site = Path(sysconfig.get_paths()["purelib"])
    sizes = []
    for package in sorted(site.iterdir()):
        if not package.is_dir() or package.name.endswith((".dist-info", ".data")):
            continue
        files = [f for f in package.rglob("*.py") if "__pycache__" not in f.parts]
        sizes.append((sum(len(DEFINITION.findall(f.read_bytes())) for f in files), package))
    repo, estimated = GitRepo(root), 0
    for count, package in sorted(sizes, key=lambda s: (-s[0], s[1].name)):
        if estimated >= chunks:
            break
        shutil.copytree(
            package,
            root / package.name,
            ignore=lambda _, names: [
                n for n in names if n == "__pycache__" or ("." in n and not n.endswith(".py"))
            ],
        )
        estimated += count
    repo.git("add", "-A")
    base = repo.commit("The repository as installed")
    victim = sorted(root.rglob("*.py"))[len(list(root.rglob("*.py"))) // 2]
    victim.write_text(victim.read_text() + "\n\ndef bench_added(x):\n    return x + 1\n")
    head = repo.commit("A change to review")
    return repo, base, head, estimated


def model(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if "### chunk" in prompt:
        return summaries_for(prompt)
    return json.dumps({"summary": "Looks fine.", "comments": []})


def send(base: str, event: str, body: dict[str, Any]) -> None:
    raw = json.dumps(body).encode()
    httpx.post(
        f"{base}/webhooks/github",
        content=raw,
        headers=headers(SECRET, raw, event, str(uuid.uuid4())),
        timeout=30,
    ).raise_for_status()


def progress(engine: Engine) -> dict[str, Any]:
    with engine.connect() as conn:
        row = conn.execute(
            text(
                "SELECT count(*), count(*) FILTER (WHERE embedding IS NOT NULL),"
                " count(*) FILTER (WHERE summarizer = 'llm') FROM code_chunks"
            )
        ).one()
        run = conn.execute(
            text("SELECT wall_seconds, stats FROM index_runs ORDER BY id LIMIT 1")
        ).first()
    return {
        "chunks": row[0],
        "embedded": row[1],
        "summarised": row[2],
        "first_index_run_s": round(run[0], 1) if run else None,
        "first_index_run_deferred": run[1]["summaries"].get("deferred") if run else None,
        "first_index_run_timings": run[1]["timings"] if run else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--definitions",
        type=int,
        default=63_000,
        help="definitions to copy (the index makes about 1.65 chunks of each: windows, modules)",
    )
    parser.add_argument("--model-seconds", type=float, default=1.0)
    parser.add_argument("--after", type=float, default=60.0, help="watch enrichment this long")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        made = time.perf_counter()
        repo, base, head, estimated = make_repository(Path(tmp) / "repo", args.definitions)
        print(f"repository made in {time.perf_counter() - made:.0f} s (~{estimated} definitions)")
        url = start_embedded_server(Path(tmp) / "data")
        engine = make_engine(DatabaseTarget(url, True))
        upgrade(engine)
        private, public = rsa_key_pair()
        with (
            running_fake_github(repo, REPO, APP_ID, public) as github,
            running_fake_openai() as fake_model,
        ):
            fake_model.chat_reply = model
            fake_model.generation_seconds = args.model_seconds
            github.pulls[1] = PullState(1, base, head, title="A change")
            settings = Settings(
                database_url=SecretStr(url.render_as_string(hide_password=False)),
                data_dir=Path(tmp) / "data",
                github_app_id=APP_ID,
                github_app_private_key=SecretStr(private),
                github_api_url=github.base_url,
                github_webhook_secret=SecretStr(SECRET),
                openai_base_url=fake_model.base_url,
                openai_api_key=SecretStr("bench"),
            )
            installed = payload(
                "installation.created",
                repositories=[{"id": 1, "name": "big", "full_name": REPO, "private": True}],
                **{"installation.id": INSTALLATION},
            )
            opened = payload(
                "pull_request.opened",
                **{
                    "repository.full_name": REPO,
                    "installation.id": INSTALLATION,
                    "pull_request.number": 1,
                    "number": 1,
                    "pull_request.head.sha": head,
                    "pull_request.draft": False,
                },
            )
            with serving(settings, engine, worker=True) as app:
                began = time.perf_counter()
                send(app, "installation", installed)
                send(app, "pull_request", opened)
                while not github.reviews:
                    time.sleep(0.05)
                first_review_s = time.perf_counter() - began
                at_review = progress(engine)
                time.sleep(args.after)
                later = progress(engine)
            rate = (later["summarised"] - at_review["summarised"]) / args.after
            print(
                json.dumps(
                    {
                        "chunks": at_review["chunks"],
                        "model_seconds_per_call": args.model_seconds,
                        "installation_to_first_review_s": round(first_review_s, 1),
                        "first_index_run_s": at_review["first_index_run_s"],
                        "first_index_run_timings_s": at_review["first_index_run_timings"],
                        "deferred_by_the_index_run": at_review["first_index_run_deferred"],
                        "summarised_at_first_review": at_review["summarised"],
                        "review_says_semantic_search_left_out": "Semantic search was left out"
                        in github.reviews[0]["body"],
                        "enrichment_chunks_per_s_after": round(rate, 1),
                        "enrichment_hours_left_at_that_rate": round(
                            (later["chunks"] - later["summarised"]) / rate / 3600, 1
                        )
                        if rate
                        else None,
                    },
                    indent=2,
                )
            )
        engine.dispose()


if __name__ == "__main__":
    main()
