"""Webhook acknowledgement latency, from a second process.

Starts `reviewbot serve` (embedded PostgreSQL in a temporary data directory, jobs queued
but no in-process worker, so the figure is the intake path: read, verify, record the
delivery, enqueue), then sends GitHub's documented pull_request.opened payload with
fresh delivery ids over loopback and reports p50/p99/max.

- one at a time (default): ``--count`` deliveries, each after the last was answered;
- ``--rate R --seconds S``: open loop, R deliveries a second for S seconds whatever the
  answers do (as GitHub sends them); latency is counted from when each was due, so a
  server that falls behind shows it (no coordinated omission).

Usage: python -m bench.webhook_latency [--count 1000] [--rate 200 --seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

SECRET = "bench-webhook-secret-0123456789"
PAYLOAD = Path(__file__).parents[1] / "tests" / "data" / "webhooks" / "pull_request.opened.json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def served(extra_env: dict[str, str]) -> Iterator[str]:
    """`reviewbot serve` on a fresh embedded database; yields its base URL once ready."""
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
            yield base
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


async def open_loop(base: str, rate: float, seconds: float) -> tuple[list[float], int]:
    """Send at ``rate`` a second; returns the latencies (from when each was due) and how
    many were not answered 202."""
    data = json.loads(PAYLOAD.read_text())
    prepared = [delivery(data, i + 1) for i in range(int(rate * seconds))]
    latencies: list[float] = []
    failed = 0
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=1000)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def send(due: float, body: bytes, headers: dict[str, str]) -> None:
            nonlocal failed
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            try:
                response = await client.post(
                    f"{base}/webhooks/github", content=body, headers=headers
                )
            except httpx.TransportError as exc:  # counted, and shown once
                failed += 1
                if failed == 1:
                    print(f"first transport error: {type(exc).__name__}: {exc!r}")
                return
            latencies.append(time.perf_counter() - due)
            failed += response.status_code != 202

        # warm the connection pool and the server's first statements
        for body, headers in [delivery(data, 10**6 + i) for i in range(20)]:
            await client.post(f"{base}/webhooks/github", content=body, headers=headers)
        start = time.perf_counter() + 0.5
        await asyncio.gather(
            *(send(start + i / rate, body, headers) for i, (body, headers) in enumerate(prepared))
        )
    return latencies, failed


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
    args = parser.parse_args()
    size = len(PAYLOAD.read_bytes())
    with served({}) as base:
        if args.rate:
            latencies, failed = asyncio.run(open_loop(base, args.rate, args.seconds))
            report(f"{args.rate:g}/s for {args.seconds:g} s, {failed} not 202", latencies, size)
        else:
            report("one at a time", one_at_a_time(base, args.count), size)


if __name__ == "__main__":
    main()
