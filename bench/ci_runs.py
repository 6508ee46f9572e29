"""The CI mode's first and second run on a repository of over 10,000 chunks (issue 49).

A git repository is made from the Python files of the largest packages in this
interpreter's site-packages (``bench/first_review.py``'s). The fake GitHub of the tests
serves it; the fake model answers at once (summaries, embeddings, the review). Each run
is the real command a CI job runs, in a clone of the repository (as a checkout with full
depth), with the index in a cache folder kept between the runs:

    reviewbot review --pr URL --post --index-cache DIR

Run 1 reviews PR 1 with an empty cache. Then the default branch moves on by one commit
(one file changed) and run 2 reviews PR 2, opened on it, with the cache run 1 left. The
clock runs from the process's start to its exit (the review posted).

    python -W ignore -m bench.ci_runs [--definitions 7000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.first_review import make_repository, model
from tests.fakes.github_server import PullState, running_fake_github
from tests.fakes.openai_server import running_fake_openai
from tests.gitrepo import GitRepo
from tests.keys import rsa_key_pair
from tests.processes import clean_env

REPO, TOKEN = "bench/big", "ghs_bench0123456789"


def run(env: dict[str, str], cwd: Path, url: str, cache: Path, out: Path) -> float:
    started = time.perf_counter()
    command = ["review", "--pr", url, "--post", "--index-cache", str(cache), "--output", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", *command],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the run failed:\n{done.stderr[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--definitions",
        type=int,
        default=7_000,
        help="definitions to copy (about 1.65 chunks each: windows, modules)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo, base, head, estimated = make_repository(root / "repo", args.definitions)
        clone = GitRepo(root / "checkout")
        clone.git("fetch", "-q", str(repo.root), "main")
        clone.git("reset", "-q", "--hard", "FETCH_HEAD")
        _, public = rsa_key_pair()
        with running_fake_github(repo, REPO, 1, public) as github, running_fake_openai() as llm:
            llm.chat_reply = model
            github.accept_token(TOKEN)
            github.pulls[1] = PullState(1, base, head, title="First change")
            env = clean_env(
                GITHUB_TOKEN=TOKEN,
                GITHUB_API_URL=github.base_url,
                OPENAI_BASE_URL=llm.base_url,
                OPENAI_API_KEY="sk-bench-0123456789abcdef",
                REVIEWBOT_LOG_LEVEL="warning",
            ) | {"PATH": f"{os.environ['PATH']}:/usr/sbin:/sbin"}
            cache = root / "cache"
            first = run(env, clone.root, f"{github.base_url}/{REPO}/pull/1", cache, root / "1.json")
            # the default branch moves on by one commit; PR 2 is opened on it
            repo.git("checkout", "-q", base)
            target = sorted((repo.root).rglob("*.py"))[7]
            target.write_text(target.read_text() + "\n\ndef moved_on(y):\n    return y * 2\n")
            new_base = repo.commit("The default branch moves on")
            repo.write("bench_second.py", "def second(z):\n    return z - 1\n")
            new_head = repo.commit("A second change to review")
            github.pulls[2] = PullState(2, new_base, new_head, title="Second change")
            clone.git("fetch", "-q", str(repo.root), new_head)
            clone.git("reset", "-q", "--hard", new_head)
            second = run(
                env, clone.root, f"{github.base_url}/{REPO}/pull/2", cache, root / "2.json"
            )
            reviews = len(github.reviews)
        wal_after_runs = round(_size(cache / "pgdata-18" / "pg_wal") / 1e6, 1)
        chunks = _chunks(cache)
        report: dict[str, Any] = {
            "definitions_copied": estimated,
            "chunks": chunks,
            "first_run_s": round(first, 1),
            "second_run_s": round(second, 1),
            "reviews_posted": reviews,
            "cache_mb": round(_size(cache) / 1e6, 1),
            "wal_mb_after_the_runs": wal_after_runs,
            "cache_mb_by_part": {
                part.name: round(_size(part) / 1e6, 1)
                for part in sorted([*cache.iterdir(), *(cache / "pgdata-18").iterdir()])
                if part.is_dir() and _size(part) > 1e6
            },
        }
        print(json.dumps(report, indent=2))


def _chunks(cache: Path) -> int:
    """The chunks the cached index holds (its database, read while no run holds it)."""
    from sqlalchemy import text

    from app.db.embedded import start_embedded_server
    from app.db.engine import DatabaseTarget, make_engine

    engine = make_engine(DatabaseTarget(start_embedded_server(cache), True))
    with engine.connect() as conn:
        count = int(conn.execute(text("SELECT count(*) FROM code_chunks")).scalar_one())
    engine.dispose()
    return count


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


if __name__ == "__main__":
    main()
