"""docker-compose.yml for GitHub only, GitLab only and both: the compose client accepts
each, and the environment it resolves for the containers loads, serves and checks here
(no Docker engine runs on these machines, so the services start as local processes
with the same environment)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from sqlalchemy import Engine, text
from sqlalchemy.engine import URL

from app.config import Settings
from app.github.manifest import NewApp, write_credentials
from tests.fakes.loopback import free_port
from tests.processes import clean_env, running
from tests.support.app import http_status, wait_for
from tests.webhooks import gitlab_headers, payload

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GITLAB_SECRET = "gl-webhook-secret-0123456789"


def _compose() -> list[str]:
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if sys.platform == "linux" and Path("/usr/bin/apt-get").exists():
        pytest.fail("no docker compose client: apt-get install docker-compose (.ci/run does)")
    pytest.skip("no docker compose client on this machine")


def _env_file(folder: Path, host: str, app_key: str) -> None:
    """.env as a newcomer has it: `reviewbot setup` for GitHub, lines by hand for GitLab,
    and the example's other lines left empty."""
    env_file = folder / ".env"
    shutil.copy(ROOT / ".env.example", env_file)
    if host in ("github", "both"):
        app = NewApp(4242, "reviewbot", app_key, "whsec_0123456789abcdef", "Iv1.x", "cs_x", "")
        write_credentials(env_file, app, "https://api.github.com", force=True)
    if host in ("gitlab", "both"):
        lines = env_file.read_text().replace(
            "GITLAB_TOKEN=\n", "GITLAB_TOKEN=glpat-0123456789abcdef\n"
        )
        lines = lines.replace(
            "GITLAB_WEBHOOK_SECRET=\n", f"GITLAB_WEBHOOK_SECRET={GITLAB_SECRET}\n"
        )
        env_file.write_text(lines)


def resolved(folder: Path) -> dict[str, Any]:
    """``docker compose config`` of the project in ``folder``, as data."""
    shutil.copy(ROOT / "docker-compose.yml", folder)
    shutil.copy(ROOT / "Dockerfile", folder)
    done = subprocess.run(
        [*_compose(), "config"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    spec: dict[str, Any] = yaml.safe_load(done.stdout)
    return spec


def _local(environment: dict[str, Any], url: URL, tmp_path: Path) -> dict[str, str]:
    """The container's environment, pointed at this machine's test database and folders."""
    env = {k: str(v) for k, v in environment.items() if v is not None}
    env |= {
        "DATABASE_URL": url.render_as_string(hide_password=False),
        "REVIEWBOT_HOST": "127.0.0.1",
        "REVIEWBOT_DATA_DIR": str(tmp_path / "data"),
        "REVIEWBOT_HEARTBEAT_FILE": str(tmp_path / "heartbeat"),
    }
    return env


@pytest.mark.parametrize("host", ["github", "gitlab", "both"])
def test_compose_config_and_its_settings_for_each_host(
    host: str, tmp_path: Path, app_key: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _env_file(tmp_path, host, app_key[0])
    spec = resolved(tmp_path)
    services = spec["services"]
    assert set(services) == {"db", "api", "worker"}
    assert services["worker"]["command"] == ["reviewbot", "worker"]
    for name in ("api", "worker"):
        volumes = [
            str(v.get("target") if isinstance(v, dict) else v) for v in services[name]["volumes"]
        ]
        assert any("/home/reviewbot/data" in v for v in volumes), volumes
        environment = services[name]["environment"]
        assert environment["DATABASE_URL"].startswith("postgresql://reviewbot:")
        assert "@db:5432/" in environment["DATABASE_URL"]
        for key, value in environment.items():
            monkeypatch.setenv(key, "" if value is None else str(value))
        settings = Settings()
        assert settings.github_app_configured is (host in ("github", "both"))
        assert (settings.gitlab_token is not None) is (host in ("gitlab", "both"))
        if settings.github_app_configured:
            key = settings.github_private_key()
            assert key is not None and key.get_secret_value() == app_key[0].strip()
        for key in environment:
            monkeypatch.delenv(key)
    assert "reviewbot-data" in spec["volumes"]


def test_a_gitlab_only_deployment_serves_gitlab_webhooks(
    tmp_path: Path, database_url: URL, engine: Engine, app_key: tuple[str, str]
) -> None:
    _env_file(tmp_path, "gitlab", app_key[0])
    api = resolved(tmp_path)["services"]["api"]
    port = free_port()
    env = clean_env(**_local(api["environment"], database_url, tmp_path))
    env["REVIEWBOT_PORT"] = str(port)
    env["PYTHONPATH"] = str(ROOT)
    serve = [sys.executable, "-m", "app.cli", *api["command"][1:]]
    with running(serve, env, tmp_path) as stderr:
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: http_status(f"{base}/healthz") == 200, seconds=60)
        body = json.dumps(
            payload(
                "gitlab/merge-request-event",
                **{"project.id": 15, "project.path_with_namespace": "acme/shop"},
            )
        ).encode()
        answer = httpx.post(
            f"{base}/webhooks/gitlab",
            content=body,
            headers=gitlab_headers(GITLAB_SECRET, "Merge Request Hook", "compose-1"),
            timeout=30,
        )
        assert answer.status_code in (200, 202), answer.text
        doctor = subprocess.run(
            [sys.executable, "-m", "app.cli", "doctor", "--json"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert "error:" not in stderr[0], stderr[0]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT delivery_id FROM webhook_deliveries")).scalars().all()
    assert rows == ["compose-1"]
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["database"]["ok"] and checks["git"]["ok"] and checks["job queue"]["ok"]
    assert "GitHub App" not in checks
    assert any(name.startswith("GitLab") for name in checks)  # gitlab.com: no network here
