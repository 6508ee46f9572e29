"""``reviewbot serve`` as a process: SIGTERM stops it and the embedded PostgreSQL it started."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from app.db.embedded import HANDLES_FILE, PGDATA_DIRNAME
from tests.fakes.loopback import free_port
from tests.processes import clean_env, wait_until_gone
from tests.support.app import wait_for

pytestmark = pytest.mark.slow


def _serve(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = clean_env(REVIEWBOT_DATA_DIR=str(data_dir), REVIEWBOT_PORT=str(port))
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def _postmaster(data_dir: Path) -> int:
    return int((data_dir / PGDATA_DIRNAME / "postmaster.pid").read_text().split("\n", 1)[0])


def test_sigterm_stops_serve_and_its_embedded_server(tmp_path: Path) -> None:
    data_dir, port = tmp_path / "data", free_port()
    # A first serve is killed (-9): it never detaches from the server it started, which
    # must not keep that server alive after the next serve exits.
    first = _serve(data_dir, port)
    try:
        wait_for(lambda: _ready(port), seconds=60)
    finally:
        first.kill()
        first.wait(10)
    handles = data_dir / PGDATA_DIRNAME / HANDLES_FILE
    assert str(first.pid) in handles.read_text()
    postmaster = _postmaster(data_dir)
    second = _serve(data_dir, port)
    try:
        wait_for(lambda: _ready(port), seconds=60)
        assert _postmaster(data_dir) == postmaster  # attached to the running server
        second.send_signal(signal.SIGTERM)
        assert second.wait(30) == 0
    finally:
        if second.poll() is None:
            second.kill()
            second.wait(10)
    assert wait_until_gone(postmaster)
