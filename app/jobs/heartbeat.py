"""A worker's liveness on local disk, for a container's health check.

The worker touches a file each time it writes its heartbeat to the database
(``SupersedingJobManager``); ``reviewbot healthcheck`` calls the process healthy while the
file is fresher than ``Settings.worker_alive_seconds`` (three beats), as ``/readyz``
counts workers. A worker that cannot reach the database, or whose loop is stuck, stops
touching the file and turns unhealthy.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path


def touch_heartbeat(path: Path) -> None:
    """Set ``path``'s modification time to now (made if missing). A file that cannot be
    written only costs the health check, never the worker: errors are swallowed."""
    with contextlib.suppress(OSError):
        path.touch()


def heartbeat_age(path: Path, now: float | None = None) -> float | None:
    """Seconds since ``path`` was last touched; None when it does not exist."""
    try:
        modified = path.stat().st_mtime
    except FileNotFoundError:
        return None
    return max(0.0, (time.time() if now is None else now) - modified)
