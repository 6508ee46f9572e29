"""Driving the real app: uvicorn on 127.0.0.1 (with procrastinate workers, or without),
signed webhooks sent to it as GitHub sends them, and waiting for what they cause."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn
from sqlalchemy import Engine, text

from app.api.main import create_app
from app.config import Settings
from tests.conftest import GITHUB_INSTALLATION, GITHUB_REPO
from tests.fakes.loopback import free_port
from tests.webhooks import headers, payload

SECRET = "whsec-test-0123456789"


@contextmanager
def serving(
    settings: Settings, engine: Engine, worker: bool, port: int | None = None
) -> Iterator[str]:
    port = port or free_port()
    app = create_app(settings, engine, worker=worker)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def pr_event(action: str, head: str, **extra: Any) -> dict[str, Any]:
    name = "pull_request.opened" if action == "opened" else "pull_request.synchronize"
    return payload(
        name,
        **{
            "repository.full_name": GITHUB_REPO,
            "installation.id": GITHUB_INSTALLATION,
            "pull_request.number": 7,
            "number": 7,
            "pull_request.head.sha": head,
            "pull_request.draft": False,
            "pull_request.state": "open",
            **extra,
        },
    )


def send(
    base: str,
    event: str,
    body: dict[str, Any] | bytes,
    delivery: str | None = None,
    secret: str = SECRET,
) -> httpx.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        f"{base}/webhooks/github",
        content=raw,
        timeout=30,
        headers=headers(secret, raw, event, delivery or str(uuid.uuid4())),
    )


def wait_for(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


def jobs_left(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(
            conn.execute(
                text(
                    "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"
                    " AND task_name NOT IN ('retry_stalled_jobs', 'recover_missed_deliveries')"
                )
            ).scalar_one()
        )


def http_status(url: str) -> int:
    """The status ``url`` answers a GET with; 0 when nothing answers (yet)."""
    import httpx

    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return 0
