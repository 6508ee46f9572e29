"""Failures name their cause: the embedded server, DATABASE_URL, the App key, unsafe diffs."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
from pydantic import SecretStr

from app.config import Settings
from app.db.embedded import describe_start_failure
from app.db.engine import parse_database_url
from app.db.migrate import MIGRATIONS_DIR
from app.diff.parse import DiffError, parse_diff
from app.errors import ConfigError
from app.github.credentials import check_app_credentials

ROOT = Path(__file__).parents[2]


def test_missing_useradd_is_named_with_the_fix(tmp_path: Path) -> None:
    exc = FileNotFoundError(2, "No such file or directory", "useradd")
    message = describe_start_failure(exc, tmp_path / "pgdata-18")
    assert "useradd not found" in message and "/usr/sbin" in message
    assert "see " not in message  # no log exists, so none is pointed at


def test_failed_command_names_program_and_its_last_words(tmp_path: Path) -> None:
    pgdata = tmp_path / "pgdata-18"
    pgdata.mkdir()
    (pgdata / "log").write_text("FATAL: lock file exists\n")
    exc = subprocess.CalledProcessError(
        1, ["/opt/pg/bin/pg_ctl", "start"], stderr="waiting\npg_ctl: could not start server\n"
    )
    message = describe_start_failure(exc, pgdata)
    assert "pg_ctl exited with status 1 (pg_ctl: could not start server)" in message
    assert message.endswith(f"see {pgdata / 'log'}")


def test_permission_error_names_the_path(tmp_path: Path) -> None:
    exc = PermissionError(13, "Permission denied", "/var/lib/reviewbot/pgdata-18")
    assert "permission denied on /var/lib/reviewbot/pgdata-18" in describe_start_failure(
        exc, tmp_path
    )


@pytest.mark.parametrize("url", ["postgresql://u:pw@127.0.0.1:9:bad/x", "postgresql://u@h:port/x"])
def test_database_url_with_a_bad_port_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError, match="not a valid database URL") as caught:
        parse_database_url(url)
    assert "pw" not in str(caught.value)


def _diff(old: str, new: str) -> bytes:
    return (f"diff --git a/{old} b/{new}\n--- a/{old}\n+++ b/{new}\n@@ -1 +1 @@\n-a\n+b\n").encode()


@pytest.mark.parametrize(
    ("old", "new"),
    [("x.py", "../../../../etc/passwd"), ("../x.py", "x.py"), ("src/../../x.py", "x.py")],
)
def test_diff_paths_leaving_the_tree_are_refused(old: str, new: str) -> None:
    with pytest.raises(DiffError, match="outside the repository"):
        parse_diff(_diff(old, new))


def test_absolute_diff_path_is_refused() -> None:
    data = b"--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n"
    with pytest.raises(DiffError, match="outside the repository"):
        parse_diff(data)


def test_diff_over_the_size_limit_is_refused_before_parsing() -> None:
    with pytest.raises(DiffError, match="over the 1000-byte limit"):
        parse_diff(_diff("a.py", "a.py") * 100, max_bytes=1000)
    assert [f.path for f in parse_diff(_diff("a/b.py", "a/b.py"))] == ["a/b.py"]


def test_malformed_private_key_is_refused_at_start_up(app_key: tuple[str, str]) -> None:
    bad = Settings(github_app_id=42, github_app_private_key=SecretStr("-----BEGIN nope"))
    with pytest.raises(ConfigError, match="not a usable RSA private key") as caught:
        check_app_credentials(bad)
    assert "nope" not in str(caught.value)
    with pytest.raises(ConfigError, match="both GITHUB_APP_ID"):
        check_app_credentials(Settings(github_app_private_key=SecretStr(app_key[0])))
    check_app_credentials(Settings(github_app_id=42, github_app_private_key=SecretStr(app_key[0])))
    check_app_credentials(Settings())  # no App at all: the CLI needs none


def test_wheel_packages_list_every_folder_and_the_migrations() -> None:
    """Every folder that ships (data-only ones too) is named: setuptools warns at each
    build about a folder with files that is not."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]

    def folders(top: str, package: str) -> set[str]:
        return {
            ".".join((package, *folder.relative_to(ROOT / top).parts))
            for folder in [ROOT / top, *(ROOT / top).rglob("*")]
            if folder.is_dir() and folder.name != "__pycache__"
        }

    on_disk = folders("app", "app") | folders("migrations", "reviewbot_migrations")
    assert set(setuptools["packages"]) == on_disk
    assert setuptools["package-dir"] == {"reviewbot_migrations": "migrations"}
    assert MIGRATIONS_DIR == ROOT / "migrations"
    assert (MIGRATIONS_DIR / "versions" / "0005_job_errors.py").is_file()


def test_every_exception_the_app_declares_is_one_family() -> None:
    """Errors are one family under ReviewbotError (the dashboard's too); only a module's
    private control-flow signals (a leading underscore) stand apart."""
    import importlib
    import inspect
    import pkgutil

    import app
    from app.errors import ReviewbotError

    outside = []
    for module in pkgutil.walk_packages(app.__path__, "app."):
        loaded = importlib.import_module(module.name)
        for name, value in vars(loaded).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.name
                and not name.startswith("_")
                and not issubclass(value, ReviewbotError)
            ):
                outside.append(f"{module.name}.{name}")
    assert outside == []
