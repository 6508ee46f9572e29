"""Worker processes for fault tests: a real ``reviewbot worker`` against the test database,
and the scenario of one killed while the model is answering its review."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.engine import URL

from app.config import Settings
from tests.fakes.openai_server import FakeOpenAI
from tests.processes import clean_env
from tests.shop_repo import review_reply
from tests.support.app import jobs_left, serving, wait_for


def start_worker(settings: Settings, url: URL, **host_env: str) -> subprocess.Popen[bytes]:
    """``reviewbot worker`` in its own process; ``host_env``: the code host's settings."""
    env = clean_env(
        DATABASE_URL=url.render_as_string(hide_password=False),
        REVIEWBOT_DATA_DIR=str(settings.data_dir),
        OPENAI_BASE_URL=str(settings.openai_base_url),
        OPENAI_API_KEY="sk-test-0123456789abcdef",
        REVIEWBOT_LLM_MAX_RETRIES="0",
        REVIEWBOT_STALLED_WORKER_SECONDS="2",
        **host_env,
    )
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def kill_a_worker_mid_review(
    settings: Settings,
    engine: Engine,
    url: URL,
    fake_openai: FakeOpenAI,
    deliver: Callable[[str], int],
    reviewed: Callable[[], bool],
    **host_env: str,
) -> None:
    """Deliver a review (``deliver(base)``, its status) to a worker that is killed while
    the model answers; a second worker takes the stalled job over. Returns once
    ``reviewed()`` and the queue is empty."""
    release = threading.Event()
    reviews_asked = threading.Event()

    def slow_review(body: dict[str, Any]) -> str:
        if "### chunk" not in body["messages"][-1]["content"] and not reviews_asked.is_set():
            reviews_asked.set()
            release.wait(30)  # the first review answer never reaches its (killed) worker
        return review_reply(body)

    fake_openai.chat_reply = slow_review
    first = start_worker(settings, url, **host_env)
    try:
        with serving(settings, engine, worker=False) as base:
            assert deliver(base) == 202
            assert reviews_asked.wait(60), "the review never reached the model"
            first.send_signal(signal.SIGKILL)
            first.wait(10)
            release.set()
            time.sleep(3)  # longer than REVIEWBOT_STALLED_WORKER_SECONDS: the worker is dead
            second = start_worker(settings, url, **host_env)
            try:
                wait_for(reviewed, seconds=90)
                wait_for(lambda: jobs_left(engine) == 0)
            finally:
                second.terminate()
                second.wait(20)
    finally:
        release.set()
        if first.poll() is None:
            first.kill()
