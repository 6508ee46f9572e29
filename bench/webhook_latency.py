"""Webhook acknowledgement latency: 1,000 signed deliveries from a second process.

Starts `reviewbot serve` (embedded PostgreSQL in a temporary data directory, jobs queued
but no in-process worker, so the figure is the intake path: read, verify, record the
delivery, enqueue), then sends GitHub's documented pull_request.opened payload 1,000
times with fresh delivery ids over loopback, one at a time, and reports p50/p99/max.

Usage: python bench/webhook_latency.py [--count 1000]
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

import httpx

SECRET = "bench-webhook-secret-0123456789"
PAYLOAD = Path(__file__).parents[1] / "tests" / "data" / "webhooks" / "pull_request.opened.json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("REVIEWBOT_", "GITHUB_", "OPENAI_"))
        }
        env.pop("DATABASE_URL", None)
        env.update(
            {
                "REVIEWBOT_DATA_DIR": tmp,
                "GITHUB_WEBHOOK_SECRET": SECRET,
                "REVIEWBOT_SERVE_WORKER": "false",
                "REVIEWBOT_LOG_LEVEL": "WARNING",
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
            with httpx.Client(timeout=30) as client:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    try:
                        if client.get(f"{base}/readyz").status_code == 200:
                            break
                    except httpx.TransportError:
                        time.sleep(0.2)
                data = json.loads(PAYLOAD.read_text())
                latencies = []
                for i in range(args.count):
                    data["pull_request"]["number"] = data["number"] = i + 1
                    body = json.dumps(data).encode()
                    signature = (
                        "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
                    )
                    headers = {
                        "X-GitHub-Event": "pull_request",
                        "X-GitHub-Delivery": str(uuid.uuid4()),
                        "X-Hub-Signature-256": signature,
                        "Content-Type": "application/json",
                    }
                    start = time.perf_counter()
                    response = client.post(f"{base}/webhooks/github", content=body, headers=headers)
                    latencies.append(time.perf_counter() - start)
                    assert response.status_code == 202, response.text
        finally:
            server.terminate()
            server.wait(30)
    latencies.sort()
    ms = [x * 1000 for x in latencies]
    p50, p99, mean = statistics.median(ms), ms[int(len(ms) * 0.99) - 1], statistics.fmean(ms)
    print(
        f"{len(ms)} deliveries of {len(body)} bytes: p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
        f"max {ms[-1]:.1f} ms, mean {mean:.1f} ms"
    )


if __name__ == "__main__":
    main()
