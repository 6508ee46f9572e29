"""A CLI command stopped with SIGTERM stops the embedded PostgreSQL it started."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from app.db.embedded import PGDATA_DIRNAME
from tests.fakes.openai_server import FakeOpenAI
from tests.processes import clean_env, wait_until_gone
from tests.shop_repo import make_history

pytestmark = pytest.mark.slow


def test_sigterm_during_review_stops_its_embedded_server(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    repo, base = make_history(tmp_path / "shop")
    asked, release = threading.Event(), threading.Event()

    def hang(body: dict[str, Any]) -> str:
        asked.set()
        release.wait(60)  # a model call (a summary or the review) is under way
        return '{"summary": "late", "comments": []}'

    fake_openai.chat_reply = hang
    data_dir = tmp_path / "data"
    env = clean_env(
        REVIEWBOT_DATA_DIR=str(data_dir),
        OPENAI_BASE_URL=fake_openai.base_url,
        OPENAI_API_KEY="sk-test-0123456789abcdef",
    )
    review = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "review", "--repo", str(repo.root), "--base", base],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert asked.wait(120), "the review never reached the model"
        pid_file = data_dir / PGDATA_DIRNAME / "postmaster.pid"
        postmaster = int(pid_file.read_text().split("\n", 1)[0])
        review.send_signal(signal.SIGTERM)
        assert review.wait(30) == 128 + signal.SIGTERM
    finally:
        release.set()
        if review.poll() is None:
            review.kill()
            review.wait(10)
    assert wait_until_gone(postmaster)
