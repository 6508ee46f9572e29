"""Webhook acknowledgement latency, from a second process.

Starts `reviewbot serve` (embedded PostgreSQL in a temporary data directory, jobs queued
but no in-process worker, so the figure is the intake path: read, verify, record the
delivery, enqueue), then sends GitHub's documented pull_request.opened payload with
fresh delivery ids over loopback and reports p50/p99/max.

- one at a time (default): ``--count`` deliveries, each after the last was answered;
- ``--rate R --seconds S``: open loop, R deliveries a second for S seconds whatever the
  answers do (as GitHub sends them); latency is counted from when each was due, so a
  server that falls behind shows it (no coordinated omission).

Faults beside the open loop (issue 48's acceptance):

- ``--burners N``: N CPU-bound processes run beside the server for the whole load, each
  bounded by its own deadline and stopped by pid at the end;
- ``--stall-at T --stall-seconds S``: T seconds in, another connection holds ACCESS
  EXCLUSIVE on ``webhook_deliveries`` for S seconds (as a migration would);
- ``--outage-at T --outage-seconds S``: T seconds in, the database server is killed
  (SIGKILL) and started again S seconds later.

Afterwards it waits for the spool to drain and audits the database: every delivery that
was answered 2xx must be recorded exactly once.

Usage: python -m bench.webhook_latency [--count 1000] [--rate 200 --seconds 30]
       [--burners 4] [--stall-at 5 --stall-seconds 12] [--outage-at 5 --outage-seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

SECRET = "bench-webhook-secret-0123456789"
PAYLOAD = Path(__file__).parents[1] / "tests" / "data" / "webhooks" / "pull_request.opened.json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def served(extra_env: dict[str, str]) -> Iterator[tuple[str, Path]]:
    """`reviewbot serve` on a fresh embedded database; yields its base URL once ready,
    and its data directory."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("REVIEWBOT_", "GITHUB_", "OPENAI_", "GITLAB_"))
        }
        env.pop("DATABASE_URL", None)
        env.update(
            {
                "REVIEWBOT_DATA_DIR": tmp,
                "GITHUB_WEBHOOK_SECRET": SECRET,
                "REVIEWBOT_SERVE_WORKER": "false",
                "REVIEWBOT_LOG_LEVEL": "WARNING",
                **extra_env,
            }
        )
        server = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            yield base, Path(tmp)
        finally:
            server.terminate()
            server.wait(30)


def delivery(data: dict[str, object], number: int) -> tuple[bytes, dict[str, str]]:
    data["number"] = number
    data["pull_request"]["number"] = number  # type: ignore[index]
    body = json.dumps(data).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": signature,
        "Content-Type": "application/json",
    }
    return body, headers


def one_at_a_time(base: str, count: int) -> list[float]:
    data = json.loads(PAYLOAD.read_text())
    latencies = []
    with httpx.Client(timeout=30) as client:
        for i in range(count):
            body, headers = delivery(data, i + 1)
            start = time.perf_counter()
            response = client.post(f"{base}/webhooks/github", content=body, headers=headers)
            latencies.append(time.perf_counter() - start)
            assert response.status_code == 202, response.text
    return latencies


@dataclass
class Outcome:
    latencies: list[float] = field(default_factory=list)  # of the 2xx answers
    acknowledged: list[str] = field(default_factory=list)  # delivery ids answered 2xx
    spooled: int = 0
    resent: int = 0  # sent again after the server closed an idle kept-alive connection
    codes: Counter[str] = field(default_factory=Counter)  # every answer, by status


#: Connections the open loop sends over, as a host opens them: enough that deliveries
#: never wait for one even while each answer takes a second or two.
CONNECTIONS = 256


async def open_loop(base: str, rate: float, seconds: float) -> Outcome:
    """Send at ``rate`` a second; returns the answers, and the latencies (from when each
    was due) of the acknowledged ones.

    A lean HTTP/1.1 client over ``CONNECTIONS`` kept-alive sockets: httpx's pool spends
    time quadratic in the requests waiting for it, which on two busy cores measured the
    client rather than the server."""
    data = json.loads(PAYLOAD.read_text())
    prepared = [delivery(data, i + 1) for i in range(int(rate * seconds))]
    outcome = Outcome()
    host, port = base.removeprefix("http://").split(":")
    for body, headers in [delivery(data, 10**6 + i) for i in range(20)]:  # warm up
        httpx.post(f"{base}/webhooks/github", content=body, headers=headers, timeout=30)
    start = time.perf_counter() + 0.5
    queue: asyncio.Queue[tuple[float, bytes, dict[str, str]]] = asyncio.Queue()
    for i, (body, headers) in enumerate(prepared):
        queue.put_nowait((start + i / rate, body, headers))

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        while not queue.empty():
            due, body, headers = queue.get_nowait()
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            try:
                status, answer = await _post(reader, writer, host, body, headers)
            except (OSError, asyncio.IncompleteReadError):
                # the server closed a kept-alive connection as it was reused (uvicorn closes
                # idle ones after 5 s): send again on a new one, as HTTP clients do
                writer.close()
                reader, writer = await asyncio.open_connection(host, int(port))
                outcome.resent += 1
                try:
                    status, answer = await _post(reader, writer, host, body, headers)
                except (OSError, asyncio.IncompleteReadError) as exc:
                    outcome.codes[type(exc).__name__] += 1
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, int(port))
                    continue
            outcome.codes[str(status)] += 1
            if 200 <= status < 300:
                outcome.latencies.append(time.perf_counter() - due)
                outcome.acknowledged.append(headers["X-GitHub-Delivery"])
                outcome.spooled += json.loads(answer).get("status") == "spooled"
        writer.close()

    await asyncio.gather(*(connection() for _ in range(CONNECTIONS)))
    return outcome


async def _post(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    host: str,
    body: bytes,
    headers: dict[str, str],
) -> tuple[int, bytes]:
    """One POST /webhooks/github on a kept-alive connection; its status and body."""
    lines = ["POST /webhooks/github HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return status, await reader.readexactly(length)


@contextmanager
def burning(count: int, seconds: float) -> Iterator[None]:
    """``count`` CPU-bound processes, each ending by itself after ``seconds``, and
    stopped by pid when the block ends, whichever comes first."""
    code = f"import time\nend = time.time() + {seconds:.0f}\nwhile time.time() < end: pass"
    burners = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait(10)


def database_url(data_dir: Path) -> str:
    from app.db.embedded import start_embedded_server

    return start_embedded_server(data_dir).render_as_string(hide_password=False)


def stall(data_dir: Path, at: float, seconds: float) -> threading.Thread:
    """From ``at`` seconds on, hold ACCESS EXCLUSIVE on the deliveries table for
    ``seconds`` from another connection."""
    from sqlalchemy import create_engine, text

    def hold() -> None:
        time.sleep(at)
        engine = create_engine(database_url(data_dir))
        with engine.begin() as conn:
            conn.execute(text("LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE"))
            print(f"stall: deliveries table locked for {seconds:g} s")
            time.sleep(seconds)
        engine.dispose()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return thread


def outage(data_dir: Path, at: float, seconds: float) -> threading.Thread:
    """From ``at`` seconds on, the database server is killed, and started again
    ``seconds`` later from another process."""
    from app.db.embedded import PGDATA_DIRNAME

    def down_and_up() -> None:
        time.sleep(at)
        pid_file = data_dir / PGDATA_DIRNAME / "postmaster.pid"
        os.kill(int(pid_file.read_text().split("\n", 1)[0]), signal.SIGKILL)
        print(f"outage: database killed for {seconds:g} s")
        time.sleep(seconds)
        code = "import sys, pathlib; from app.db.embedded import start_embedded_server as s;"
        code += " s(pathlib.Path(sys.argv[1]))"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the old backends are gone
            started = subprocess.run([sys.executable, "-c", code, str(data_dir)])
            if started.returncode == 0:
                print("outage: database back")
                return
            time.sleep(1)

    thread = threading.Thread(target=down_and_up, daemon=True)
    thread.start()
    return thread


def audit(data_dir: Path, acknowledged: list[str], wait_seconds: float = 600) -> str:
    """Wait for the spool to drain; then how many acknowledged deliveries are recorded,
    and how many of them more than once."""
    from sqlalchemy import create_engine, text

    spool = data_dir / "spool"
    started = time.monotonic()
    while list(spool.glob("*.json")) and time.monotonic() - started < wait_seconds:
        time.sleep(0.5)
    drained = time.monotonic() - started
    left = len(list(spool.glob("*.json")))
    engine = create_engine(database_url(data_dir))
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT count(*), count(DISTINCT delivery_id) FROM webhook_deliveries"
                " WHERE delivery_id = ANY(:ids)"
            ),
            {"ids": acknowledged},
        ).one()
    engine.dispose()
    return (
        f"recorded {rows[1]} of {len(acknowledged)} acknowledged, {rows[0] - rows[1]} twice;"
        f" spool drained in {drained:.1f} s, {left} left"
    )


def report(label: str, latencies: list[float], size: int) -> None:
    ms = sorted(x * 1000 for x in latencies)
    p50, p99, mean = statistics.median(ms), ms[int(len(ms) * 0.99) - 1], statistics.fmean(ms)
    print(
        f"{label}: {len(ms)} deliveries of {size} bytes: p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
        f"max {ms[-1]:.1f} ms, mean {mean:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=0.0, help="deliveries a second (open loop)")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--burners", type=int, default=0, help="CPU-bound processes beside it")
    parser.add_argument("--stall-at", type=float, default=None)
    parser.add_argument("--stall-seconds", type=float, default=12.0)
    parser.add_argument("--outage-at", type=float, default=None)
    parser.add_argument("--outage-seconds", type=float, default=60.0)
    args = parser.parse_args()
    size = len(PAYLOAD.read_bytes())
    with served({}) as (base, data_dir):
        if not args.rate:
            report("one at a time", one_at_a_time(base, args.count), size)
            return
        with burning(args.burners, args.seconds + 30):
            if args.stall_at is not None:
                stall(data_dir, args.stall_at, args.stall_seconds)
            if args.outage_at is not None:
                outage(data_dir, args.outage_at, args.outage_seconds)
            outcome = asyncio.run(open_loop(base, args.rate, args.seconds))
        codes = ", ".join(f"{code}: {n}" for code, n in sorted(outcome.codes.items()))
        label = f"{args.rate:g}/s for {args.seconds:g} s, {args.burners} burners ({codes})"
        report(label, outcome.latencies, size)
        print(
            f"spooled: {outcome.spooled}; resent on a closed kept-alive connection:"
            f" {outcome.resent}; {audit(data_dir, outcome.acknowledged)}"
        )


if __name__ == "__main__":
    main()
