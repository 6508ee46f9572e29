"""The intake's spool: verified deliveries kept on local disk while the database cannot
take them, so that a code host never hears 503 for a delivery reviewbot could check.

One file per delivery (what the intake would have recorded: the delivery's id, event,
action, repository, installation and the jobs it queues; never the payload), written to
a temporary name, fsync'd, renamed into place and the folder fsync'd: a file that is
there is whole. The drainer (``Intake.drain``, ``app/api/intake.py``) records each file
through the same transaction as a live delivery, keyed by the delivery's id, and only
then removes it: a crash between the two records nothing twice (the id is taken
already). The spool is bounded in bytes; a full spool, or a disk that fails, is the only
time the intake answers 503.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.errors import ReviewbotError
from app.task_specs import ARGUMENTS, Job, TaskName


class SpoolError(ReviewbotError):
    """A delivery could not be kept in the spool."""


class SpoolFull(SpoolError):
    """The spool holds as many bytes as it may; the delivery was not kept."""


class SpoolCorrupt(SpoolError):
    """A spooled file cannot be read back as a delivery."""


@dataclass(frozen=True)
class ReceivedDelivery:
    """What the intake records of a delivery, and the jobs it queues: taken live, or
    read back from the spool."""

    delivery: str
    event: str
    action: str | None
    repo: str | None
    installation_id: int | None
    jobs: tuple[Job, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "delivery": self.delivery,
            "event": self.event,
            "action": self.action,
            "repo": self.repo,
            "installation_id": self.installation_id,
            "jobs": [
                {
                    "task": str(job.task),
                    "args": job.args,
                    "queueing_lock": job.queueing_lock,
                    "lock": job.lock,
                }
                for job in self.jobs
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReceivedDelivery:
        jobs = []
        for job in data["jobs"]:
            task = TaskName(job["task"])
            jobs.append(
                Job(task, ARGUMENTS[task](**job["args"]), job["queueing_lock"], job["lock"])
            )
        return cls(
            str(data["delivery"]),
            str(data["event"]),
            data["action"],
            data["repo"],
            data["installation_id"],
            tuple(jobs),
        )


class Spool:
    """Spooled deliveries under ``folder``, at most ``max_bytes`` of them. The
    constructor does no I/O; the first ``put`` makes the folder."""

    SUFFIX = ".json"

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._bytes: int | None = None  # counted on first use, then kept

    def put(self, item: ReceivedDelivery) -> Path:
        """Keep ``item`` durably; its path. ``SpoolFull`` past the bound, ``SpoolError``
        when the disk refuses."""
        data = json.dumps(item.to_json(), separators=(",", ":")).encode()
        name = f"{time.time_ns():020d}-{item.delivery}{self.SUFFIX}"
        with self._lock:
            try:
                used = self._used()
                if used + len(data) > self.max_bytes:
                    raise SpoolFull(
                        f"the webhook spool {self.folder} is full ({used:,} of"
                        f" {self.max_bytes:,} bytes): the database has been away long;"
                        " raise REVIEWBOT_SPOOL_MAX_BYTES"
                    )
                path = self._write(name, data)
            except OSError as exc:
                raise SpoolError(
                    f"cannot write to the webhook spool {self.folder}: {exc}"
                ) from None
            self._bytes = used + len(data)
        return path

    def pending(self) -> list[Path]:
        """The spooled files, oldest first (names start with the time they were taken)."""
        try:
            names = sorted(
                entry.name
                for entry in os.scandir(self.folder)
                if entry.name.endswith(self.SUFFIX) and not entry.name.startswith(".")
            )
        except FileNotFoundError:
            return []
        return [self.folder / name for name in names]

    def read(self, path: Path) -> ReceivedDelivery:
        try:
            return ReceivedDelivery.from_json(json.loads(path.read_bytes()))
        except (ValueError, KeyError, TypeError) as exc:
            raise SpoolCorrupt(f"{path.name}: {type(exc).__name__}: {exc}") from None

    def remove(self, path: Path) -> None:
        """Forget a recorded delivery (another process may have taken it first)."""
        with self._lock:
            try:
                size = path.stat().st_size
                path.unlink()
            except FileNotFoundError:
                return
            if self._bytes is not None:
                self._bytes = max(0, self._bytes - size)

    def set_aside(self, path: Path) -> Path:
        """Move a file that can never be recorded to ``failed/``, for an operator: it is
        kept, not retried and not lost."""
        failed = self.folder / "failed"
        failed.mkdir(parents=True, exist_ok=True)
        target = failed / path.name
        with self._lock, contextlib.suppress(FileNotFoundError):
            path.replace(target)
            self._bytes = None  # counted again on next use
        return target

    def _used(self) -> int:
        if self._bytes is None:
            self._bytes = sum(path.stat().st_size for path in self.pending() if path.exists())
        return self._bytes

    def _write(self, name: str, data: bytes) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self.folder / f".{name}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        final = self.folder / name
        os.replace(temporary, final)
        folder_fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(folder_fd)
        finally:
            os.close(folder_fd)
        return final
