"""A database that goes away under the app: stop its server hard, start it again (from
another process), and stop it for good at the end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from sqlalchemy import Engine

from app.db.embedded import PGDATA_DIRNAME, start_embedded_server
from app.db.engine import DatabaseTarget, make_engine
from app.db.migrate import upgrade


class Outage:
    """A migrated database on its own embedded server, for a test to stop under the app
    (``down``) and start again (``up``); stopped for good when the test ends."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        url = start_embedded_server(data_dir)
        self.engine: Engine = make_engine(DatabaseTarget(url, embedded=False))
        upgrade(self.engine)

    def down(self) -> None:
        kill_postmaster(self.data_dir / PGDATA_DIRNAME)

    def up(self) -> None:
        restart(self.data_dir)

    def close(self) -> None:
        self.engine.dispose()
        stop_postmaster(self.data_dir / PGDATA_DIRNAME)


def kill_postmaster(pgdata: Path) -> None:
    pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    os.kill(pid, signal.SIGKILL)


def restart(data_dir: Path) -> None:
    """Start the server again from another process (this one's handle still thinks it runs);
    it keeps running after that process exits, since this process still holds a handle."""
    code = (
        "import sys, pathlib; from app.db.embedded import start_embedded_server as start;"
        " start(pathlib.Path(sys.argv[1]))"
    )
    deadline = time.monotonic() + 60
    while True:  # until the killed server's backends have noticed and exited
        done = subprocess.run([sys.executable, "-c", code, str(data_dir)], capture_output=True)
        if done.returncode == 0:
            return
        assert time.monotonic() < deadline, done.stderr.decode()[-2000:]
        time.sleep(1)


def stop_postmaster(pgdata: Path) -> None:
    """Stop the restarted server (fast shutdown): no process of this run owns it, so none
    would stop it, and it would outlive the test run."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
        os.kill(pid, signal.SIGINT)
    except (OSError, ValueError):
        return  # not running
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.2)


def ready(base: str) -> bool:
    try:
        return httpx.get(f"{base}/readyz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False
