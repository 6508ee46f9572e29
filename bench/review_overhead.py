"""The bot's own time per review: from the signed webhook to the posted review, with a
zero-latency fake model, so what is measured is reviewbot (intake, queue, diff, changed
functions, retrieval, prompt, posting) and not the model.

Everything runs on 127.0.0.1: a fresh embedded PostgreSQL, the fake GitHub of the tests
serving a clone of a real repository, the fake model (it answers at once), and the app
(uvicorn, one in-process worker). The repository is indexed at the PR's base first
(untimed); then --reviews pull requests, all with the same real commit as their change,
are opened one after another, each timed from the webhook to the review on GitHub.

    python -W ignore -m bench.review_overhead --mirror /work/.mirror/<owner>+<name>/<dir>.git

The PR is the newest first-parent commit that changes --files (default 20) or more code
files.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import uvicorn
from pydantic import SecretStr
from sqlalchemy import Engine, text

from app.api.main import create_app
from app.config import Settings
from app.db import vector_index
from app.db.embedded import start_embedded_server
from app.db.engine import DatabaseTarget, make_engine
from app.db.migrate import upgrade
from app.flows.index import index_at
from app.github.client import RepoApi
from app.runtime import Runtime
from tests.fakes.github_server import FakeGitHub, PullState, running_fake_github
from tests.fakes.loopback import free_port
from tests.fakes.openai_server import running_fake_openai, summaries_for
from tests.gitrepo import GitRepo
from tests.keys import rsa_key_pair
from tests.webhooks import headers

REPO, INSTALLATION, APP_ID = "bench/repo", 7, 42
SECRET = "bench-webhook-secret-0123456789"
CODE = (".py", ".go", ".ts", ".tsx", ".js", ".rs", ".java")


def pick_commit(root: Path, files: int) -> tuple[str, int]:
    """The newest first-parent commit changing at least ``files`` code files."""
    log = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "log",
            "--first-parent",
            "--no-merges",
            "--format=%H",
            "-n",
            "3000",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for sha in log:
        names = subprocess.run(
            ["git", "-C", str(root), "diff", "--name-only", f"{sha}~1", sha],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        changed = sum(1 for n in names if n.endswith(CODE))
        if changed >= files:
            return sha, changed
    raise SystemExit(f"no commit changes {files} code files")


def code_lines(root: Path, ref: str) -> int:
    names = subprocess.run(
        ["git", "-C", str(root), "ls-tree", "-r", "--name-only", ref],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    total = 0
    for name in names:
        if name.endswith(CODE):
            blob = subprocess.run(
                ["git", "-C", str(root), "show", f"{ref}:{name}"], capture_output=True, check=False
            ).stdout
            total += blob.count(b"\n")
    return total


def instant_model(body: dict[str, object]) -> str:
    prompt = body["messages"][-1]["content"]  # type: ignore[index]
    if "### chunk" in prompt:
        return summaries_for(prompt)
    return json.dumps({"summary": "Looks fine.", "comments": []})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, required=True)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--reviews", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "-q", str(args.mirror), str(root)], check=True)
        head, changed = pick_commit(root, args.files)
        base = f"{head}~1"
        base = subprocess.run(
            ["git", "-C", str(root), "rev-parse", base], capture_output=True, text=True, check=True
        ).stdout.strip()
        lines = code_lines(root, base)
        url = start_embedded_server(Path(tmp) / "data")
        engine = make_engine(DatabaseTarget(url, True))
        upgrade(engine)
        private, public = rsa_key_pair()
        with (
            running_fake_github(GitRepo(root), REPO, APP_ID, public) as github,
            running_fake_openai() as model,
        ):
            model.chat_reply = instant_model
            settings = Settings(
                database_url=SecretStr(url.render_as_string(hide_password=False)),
                data_dir=Path(tmp) / "data",
                github_app_id=APP_ID,
                github_app_private_key=SecretStr(private),
                github_api_url=github.base_url,
                github_webhook_secret=SecretStr(SECRET),
                openai_base_url=model.base_url,
                openai_api_key=SecretStr("bench"),
                embedding_provider="hash",
            )
            run = Runtime(settings, engine)
            began = time.perf_counter()
            report = index_at(run, RepoApi(run.github.installation(INSTALLATION), REPO), REPO, base)
            indexed_s = time.perf_counter() - began
            for n in range(1, args.reviews + 1):
                github.pulls[n] = PullState(n, base, head, title=f"PR {n}")
            times = _review_all(settings, engine, github, head, args.reviews)
            with engine.connect() as conn:
                chunks = conn.execute(text("SELECT count(*) FROM code_chunks")).scalar_one()
                repo_id = conn.execute(text("SELECT id FROM repositories")).scalar_one()
                lists_probes = vector_index.index_settings(conn, repo_id)
        engine.dispose()
    print(
        json.dumps(
            {
                "repository_code_lines": lines,
                "chunks": chunks,
                "pr_code_files": changed,
                "index_s": round(indexed_s, 1),
                "index_report_chunks": report.chunks_total,
                "vector_index_lists_probes": lists_probes,
                "reviews": len(times),
                "webhook_to_review_p50_s": round(statistics.median(times), 3),
                "webhook_to_review_p95_s": round(sorted(times)[int(0.95 * (len(times) - 1))], 3),
                "webhook_to_review_max_s": round(max(times), 3),
            },
            indent=2,
        )
    )


def _review_all(
    settings: Settings, engine: Engine, github: FakeGitHub, head: str, reviews: int
) -> list[float]:
    app = create_app(settings, engine, worker=True)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    times = []
    try:
        for n in range(1, reviews + 1):
            event = {
                "action": "opened",
                "number": n,
                "pull_request": {
                    "number": n,
                    "state": "open",
                    "draft": False,
                    "head": {"sha": head},
                },
                "repository": {"full_name": REPO, "default_branch": "main"},
                "installation": {"id": INSTALLATION},
            }
            body = json.dumps(event).encode()
            began = time.perf_counter()
            httpx.post(
                f"http://127.0.0.1:{port}/webhooks/github",
                content=body,
                headers=headers(SECRET, body, "pull_request", str(uuid.uuid4())),
                timeout=30,
            ).raise_for_status()
            while not any(r["pr"] == n for r in github.reviews):
                time.sleep(0.01)
            times.append(time.perf_counter() - began)
    finally:
        server.should_exit = True
        thread.join(timeout=20)
    return times


if __name__ == "__main__":
    main()
