"""Running one tool as a contained process: in a scratch folder, with an environment that
holds no secret (no tokens, no keys: PATH, HOME and the locale only), a time limit, a
memory limit, and its output cut at a size; its process group is killed at the time
limit, whatever it started."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Limits:
    """What one run of a tool may use."""

    seconds: float = 60.0
    memory_bytes: int = 2 << 30  # address space (a Haskell or Rust runtime reserves some)
    output_bytes: int = 8 << 20  # its report, at most; more is cut


@dataclass(frozen=True)
class Ran:
    """How a run ended: its exit code (None: killed at the time limit), its report and
    its errors (each cut at the limit), and how long it took."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    truncated: bool = False

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def clean_environment(home: Path) -> dict[str, str]:
    """The only environment a tool sees: nothing of reviewbot's own (its tokens and keys
    are in ``os.environ``), and a HOME of its own so no user configuration applies."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "NO_COLOR": "1",
    }


#: Sets the limits, then becomes the tool (exec): a trampoline, since ``preexec_fn`` is not
#: safe in a process with threads (a worker runs its jobs in threads). Python ignores
#: SIGXFSZ and SIGPIPE, and an ignored signal stays ignored across exec: both back to
#: their default, so a tool writing past its limit is stopped.
CONTAIN = """
import os, resource, signal, sys
memory, output = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
resource.setrlimit(resource.RLIMIT_FSIZE, (output, output))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
os.execv(sys.argv[3], sys.argv[3:])
"""


def _limit_args(limits: Limits) -> list[str]:
    return [str(limits.memory_bytes), str(limits.output_bytes + 1)]


def run_limited(argv: Sequence[str], cwd: Path, home: Path, limits: Limits) -> Ran:
    """Run ``argv`` in ``cwd`` under ``limits``. Its output goes to files whose size the
    kernel bounds (RLIMIT_FSIZE), so a tool printing without end is stopped by its own
    write failing, not by reviewbot's memory."""

    started = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", CONTAIN, *_limit_args(limits), *argv],
            cwd=cwd,
            env=clean_environment(home),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            close_fds=True,
        )
        try:
            code: int | None = process.wait(timeout=limits.seconds)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            _kill_group(process.pid)
            process.wait()
        out.seek(0)
        err.seek(0)
        stdout = out.read(limits.output_bytes + 1)
        stderr = err.read(64 * 1024)
    truncated = len(stdout) > limits.output_bytes
    return Ran(code, stdout[: limits.output_bytes], stderr, time.monotonic() - started, truncated)


def _kill_group(pid: int) -> None:
    """Kill what the tool left running in its session (a child it forked, a hang)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
