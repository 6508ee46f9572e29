"""Running reviewbot as a separate process in tests: a clean environment, waiting for exit."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

OWN_PREFIXES = ("REVIEWBOT_", "OPENAI_", "GITHUB_", "GITLAB_", "AZURE_")


def clean_env(**settings: str) -> dict[str, str]:
    """This process's environment without any reviewbot, model or GitHub setting (nor
    DATABASE_URL), plus ``settings``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(OWN_PREFIXES) and k != "DATABASE_URL"
    }
    return env | settings


def wait_until_gone(pid: int, seconds: float = 20) -> bool:
    """True once no process has ``pid`` (False if it still runs after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while psutil.pid_exists(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


@contextmanager
def running(command: list[str], env: dict[str, str], cwd: Path) -> Iterator[list[str]]:
    """``command`` runs for the block, then is terminated; the yielded list then holds
    what it wrote to stderr (for the test to check after the block)."""
    process = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    said: list[str] = []
    try:
        yield said
    finally:
        process.terminate()
        said.append(process.communicate(timeout=60)[1])
