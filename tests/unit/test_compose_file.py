"""docker-compose.yml: the shape the README promises, and valid for the docker client."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"


def test_services_db_api_worker() -> None:
    spec = yaml.safe_load(COMPOSE.read_text())
    services = spec["services"]
    assert services["db"]["image"] == "pgvector/pgvector:pg17"
    assert services["api"]["build"] == "."
    assert services["worker"]["command"] == ["reviewbot", "worker"]
    assert services["worker"]["deploy"]["replicas"] >= 2
    for name in ("api", "worker"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgresql://")
        assert "@db:5432/" in env["DATABASE_URL"]


def test_dockerfile_runs_as_non_root_from_slim_multistage() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert text.count("FROM python:3.11-slim") == 2
    assert "USER reviewbot" in text


def _compose_command() -> list[str] | None:
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_docker_compose_config_accepts_the_file(tmp_path: Path) -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("no docker compose client on this machine")
    (tmp_path / "github-app.pem").write_text("placeholder")
    result = subprocess.run(
        [*command, "-f", str(COMPOSE), "config", "--quiet"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "GITHUB_APP_PRIVATE_KEY_FILE": str(tmp_path / "github-app.pem"),
        },
    )
    assert result.returncode == 0, result.stderr
