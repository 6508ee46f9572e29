"""Soak: mixed webhook traffic with database restarts and worker kills; nothing may be lost.

Runs, all on 127.0.0.1: a dedicated embedded PostgreSQL, the fake GitHub (which signs and
sends the webhooks and keeps GitHub's delivery log) and the fake model from the tests,
one `reviewbot serve` (API only) and two `reviewbot worker` processes. For --minutes it
sends --rate deliveries a second: pull requests opened and pushed to (100 PRs whose heads
move every --fault-every seconds), comments, pushes to other branches and pings.
Every --fault-every seconds the PostgreSQL postmaster is killed (-9) and restarted, and
half a period later a worker is killed (-9) and started again.

At the end it waits for the queue to drain, then reports:
- lost deliveries: sent (first attempt) but never recorded by reviewbot, redeliveries
  included (GitHub does not retry; reviewbot asks for redeliveries itself);
- stuck jobs: jobs still todo/doing after the drain;
- duplicate reviews: more than one review posted for one (PR, head);
- acknowledgement latency (p50, p99) of the deliveries that were answered.

Usage: python -W ignore bench/soak.py [--minutes 30] [--rate 50] [--fault-every 300]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.db.embedded import PGDATA_DIRNAME, start_embedded_server  # noqa: E402
from app.db.engine import DatabaseTarget, make_engine  # noqa: E402
from app.db.migrate import upgrade  # noqa: E402
from tests.fakes.github_server import FakeGitHub, PullState, running_fake_github  # noqa: E402
from tests.fakes.loopback import free_port  # noqa: E402
from tests.fakes.openai_server import running_fake_openai  # noqa: E402
from tests.keys import rsa_key_pair  # noqa: E402
from tests.shop_repo import make_history, review_reply  # noqa: E402
from tests.webhooks import headers  # noqa: E402

SECRET = "soak-webhook-secret-0123456789"
REPO, INSTALLATION, APP_ID, PRS = "acme/shop", 99, 42, 100
SENDERS = 4  # concurrent senders, as GitHub delivers concurrently


def event_for(rng: random.Random, github: FakeGitHub) -> tuple[str, dict[str, Any]]:
    """A small payload with every field the router reads, GitHub's shapes."""
    base = {
        "repository": {"full_name": REPO, "default_branch": "main"},
        "installation": {"id": INSTALLATION},
    }
    roll = rng.random()
    if roll < 0.4:
        number = rng.randint(1, PRS)
        pr = github.pulls[number]
        action = rng.choice(["opened", "synchronize", "synchronize"])
        body = {
            "number": number,
            "pull_request": {
                "number": number,
                "state": "open",
                "draft": False,
                "head": {"sha": pr.head},
            },
        }
        return "pull_request", {**base, "action": action, **body}
    if roll < 0.6:
        comment = {"id": rng.randint(1, 10**9), "body": "looks good", "user": {"login": "ann"}}
        issue = {"number": rng.randint(1, PRS), "pull_request": {}}
        return "issue_comment", {**base, "action": "created", "comment": comment, "issue": issue}
    if roll < 0.8:
        return "push", {**base, "ref": "refs/heads/feature", "deleted": False}
    return "ping", {"zen": "Keep it logically awesome.", "hook_id": 1}


def wait_ready(url: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=5).status_code in (200, 503):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} did not answer")


def restart_database(data_dir: Path) -> float:
    """kill -9 the postmaster, then start the server again; returns seconds of outage."""
    pgdata = data_dir / PGDATA_DIRNAME
    pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    started = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    code = "import sys, pathlib; from app.db.embedded import start_embedded_server as s;"
    code += " s(pathlib.Path(sys.argv[1]))"
    while subprocess.run(
        [sys.executable, "-c", code, str(data_dir)], capture_output=True, cwd=ROOT
    ).returncode:
        time.sleep(0.5)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rate", type=float, default=50)
    parser.add_argument("--fault-every", type=float, default=300)
    parser.add_argument("--drain-seconds", type=float, default=900)
    parser.add_argument(
        "--min-drain", type=float, default=330, help="wait at least this long (a recovery pass)"
    )
    args = parser.parse_args()
    rng = random.Random(7)
    private, public = rsa_key_pair()
    with tempfile.TemporaryDirectory(prefix="reviewbot-soak-") as tmp:
        tmp_path = Path(tmp)
        db_dir = tmp_path / "pg"
        url = start_embedded_server(db_dir)
        engine = make_engine(DatabaseTarget(url, embedded=False))
        upgrade(engine)
        repo, base_sha = make_history(tmp_path / "shop")
        head = repo.git("rev-parse", "HEAD").decode().strip()
        with (
            running_fake_github(repo, REPO, APP_ID, public) as github,
            running_fake_openai() as llm,
        ):
            llm.chat_reply = review_reply
            for n in range(1, PRS + 1):
                github.pulls[n] = PullState(n, base_sha, head)
            port = free_port()
            github.webhook_url = f"http://127.0.0.1:{port}/webhooks/github"
            github.webhook_secret = SECRET
            env = {
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("REVIEWBOT_", "GITHUB_", "OPENAI_")) and k != "DATABASE_URL"
            } | {
                "DATABASE_URL": url.render_as_string(hide_password=False),
                "REVIEWBOT_DATA_DIR": str(tmp_path / "data"),
                "GITHUB_APP_ID": str(APP_ID),
                "GITHUB_APP_PRIVATE_KEY": private,
                "GITHUB_API_URL": github.base_url,
                "GITHUB_WEBHOOK_SECRET": SECRET,
                "OPENAI_BASE_URL": llm.base_url,
                "OPENAI_API_KEY": "sk-soak-0123456789abcdef",
                "REVIEWBOT_SERVE_WORKER": "false",
                "REVIEWBOT_STALLED_WORKER_SECONDS": "10",
                "REVIEWBOT_LOG_LEVEL": "WARNING",
            }
            logs = tmp_path / "logs"
            logs.mkdir()

            def spawn(name: str, *command: str) -> subprocess.Popen[bytes]:
                out = (logs / f"{name}.log").open("ab")
                return subprocess.Popen(
                    [sys.executable, "-m", "app.cli", *command],
                    env=env,
                    cwd=ROOT,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )

            api = spawn("api", "serve", "--port", str(port))
            wait_ready(f"http://127.0.0.1:{port}/healthz")
            workers = [spawn(f"worker{i}", "worker") for i in range(2)]
            sent: list[str] = []
            latencies: list[float] = []
            answers: Counter[int] = Counter()
            faults: list[str] = []
            stop = threading.Event()

            lock = threading.Lock()

            def sender(share: float) -> None:
                interval = 1.0 / share
                next_at = time.monotonic()
                with httpx.Client(timeout=10) as client:  # GitHub gives up after 10 s
                    while not stop.is_set():
                        with lock:
                            event, body = event_for(rng, github)
                        guid = str(uuid.uuid4())
                        started = time.perf_counter()
                        status = _deliver(client, github, event, body, guid)
                        elapsed = time.perf_counter() - started
                        with lock:
                            sent.append(guid)
                            answers[status] += 1
                            if 200 <= status < 300:
                                latencies.append(elapsed)
                        next_at += interval
                        time.sleep(max(0.0, next_at - time.monotonic()))

            threads = [
                threading.Thread(target=sender, args=(args.rate / SENDERS,), daemon=True)
                for _ in range(SENDERS)
            ]
            began = time.monotonic()
            for thread in threads:
                thread.start()
            period, last_fault, kills = args.fault_every, began, 0
            worker_killed = False
            try:
                while time.monotonic() - began < args.minutes * 60:
                    time.sleep(1)
                    now = time.monotonic()
                    if not worker_killed and now - last_fault >= period / 2:
                        victim = kills % 2
                        workers[victim].kill()
                        workers[victim].wait(10)
                        workers[victim] = spawn(f"worker{victim}", "worker")
                        faults.append(f"{now - began:6.0f} s: worker {victim} killed (-9)")
                        kills, worker_killed = kills + 1, True
                    if now - last_fault >= period:
                        outage = restart_database(db_dir)
                        faults.append(
                            f"{now - began:6.0f} s: PostgreSQL killed (-9), back in {outage:.1f} s"
                        )
                        moved = repo.write(
                            f"shop/soak_{kills}.py", f"def soak_{kills}():\n    return {kills}\n"
                        ).commit(f"soak {kills}")
                        for n in rng.sample(range(1, PRS + 1), 20):
                            github.pulls[n].head = moved
                        last_fault, worker_killed = now, False
            finally:
                stop.set()
                for thread in threads:
                    thread.join(30)
            sending_seconds = time.monotonic() - began
            drained = _drain(engine, args.drain_seconds, args.min_drain)
            report(engine, github, sent, latencies, answers, faults, sending_seconds, drained)
            for proc in [api, *workers]:
                proc.terminate()
                proc.wait(30)
        engine.dispose()


def _deliver(
    client: httpx.Client, github: FakeGitHub, event: str, body: dict[str, Any], guid: str
) -> int:
    """Send as GitHub does (one attempt, no retry) and log it in GitHub's delivery log."""
    import json

    raw = json.dumps(body).encode()
    try:
        status = client.post(
            github.webhook_url, content=raw, headers=headers(SECRET, raw, event, guid)
        ).status_code
    except httpx.HTTPError:
        status = 0
    github.log_delivery(event, body, guid, status, redelivery=False)
    return status


def _drain(engine: Any, seconds: float, at_least: float) -> float:
    """Wait ``at_least`` seconds (so a periodic redelivery pass runs), then until no job
    is waiting or running, ``seconds`` at most."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        with engine.connect() as conn:
            busy = conn.execute(
                text(
                    "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"
                    " AND task_name NOT IN ('retry_stalled_jobs', 'recover_missed_deliveries')"
                    " AND (scheduled_at IS NULL OR scheduled_at < now() + interval '1 minute')"
                )
            ).scalar_one()
        if busy == 0 and time.monotonic() - started > at_least:
            break
        time.sleep(5)
    return time.monotonic() - started


def report(
    engine: Any,
    github: FakeGitHub,
    sent: list[str],
    latencies: list[float],
    answers: Counter[int],
    faults: list[str],
    sending_seconds: float,
    drained: float,
) -> None:
    with engine.connect() as conn:
        recorded = set(conn.execute(text("SELECT delivery_id FROM webhook_deliveries")).scalars())
        stuck = conn.execute(
            text(
                "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"
                " AND task_name NOT IN ('retry_stalled_jobs', 'recover_missed_deliveries')"
            )
        ).scalar_one()
        states = dict(
            conn.execute(
                text("SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY 1")
            ).all()
        )
    lost = [g for g in sent if g not in recorded]
    tries: dict[str, list[int]] = {}
    for d in github.deliveries:
        tries.setdefault(d["guid"], []).append(d["status_code"])
    why = Counter(f"{len(tries[g])} attempt(s), last {tries[g][-1] or 'no answer'}" for g in lost)
    per_head = Counter((r["pr"], r["commit_id"]) for r in github.reviews)
    duplicates = sum(n - 1 for n in per_head.values() if n > 1)
    redeliveries = sum(1 for d in github.deliveries if d["redelivery"])
    ms = sorted(x * 1000 for x in latencies)
    p50 = statistics.median(ms) if ms else float("nan")
    p99 = ms[max(0, int(len(ms) * 0.99) - 1)] if ms else float("nan")
    rate = len(sent) / sending_seconds
    print(f"sent {len(sent)} deliveries in {sending_seconds:.0f} s ({rate:.1f}/s)")
    print("answers: " + ", ".join(f"{k or 'no answer'}: {v}" for k, v in sorted(answers.items())))
    print(f"redeliveries asked for by reviewbot: {redeliveries}")
    print("faults:\n" + "\n".join(faults))
    print(f"drain: {drained:.0f} s; jobs by state: {states}")
    print(f"reviews posted: {len(github.reviews)} for {len(per_head)} (PR, head) pairs")
    print(f"LOST deliveries: {len(lost)}" + (f" ({dict(why)})" if lost else ""))
    print(f"STUCK jobs: {stuck}")
    print(f"DUPLICATE reviews: {duplicates}")
    worst = ms[-1] if ms else float("nan")
    print(
        f"acknowledgement latency (answered): p50 {p50:.1f} ms, p99 {p99:.1f} ms,"
        f" max {worst:.1f} ms"
    )


if __name__ == "__main__":
    main()
