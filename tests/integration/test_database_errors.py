"""Failure paths of opening a database: clear one-line errors, real servers."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import URL

from app.config import Settings
from app.db.embedded import prepare_data_dir
from app.db.engine import DatabaseTarget, connect_checked, make_engine, open_database
from app.errors import DatabaseUnavailable, DataDirError, ExtensionMissing


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "DATABASE_URL"))
    }
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_bad_database_url_exits_nonzero_with_one_line_naming_host_not_password() -> None:
    result = _cli("db", DATABASE_URL="postgresql://bob:hunter2-pw@127.0.0.1:1/rb")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        "error: cannot connect to PostgreSQL at postgresql://bob@127.0.0.1:1/rb"
    )
    assert "hunter2-pw" not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


def test_unusable_data_dir_exits_nonzero_with_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = _cli("db", REVIEWBOT_DATA_DIR=str(blocker / "data"))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "data directory" in lines[0] and "REVIEWBOT_DATA_DIR" in lines[0]
    assert "Traceback" not in result.stderr


def test_missing_data_dir_is_created(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "data"
    assert prepare_data_dir(target) == target.resolve()
    assert target.is_dir()


def test_read_only_data_dir_is_refused(tmp_path: Path) -> None:
    # /proc refuses writes even to root, so this runs the same as root and as a user.
    with pytest.raises(DataDirError, match="is not usable"):
        prepare_data_dir(Path("/proc/reviewbot-data"))


@pytest.mark.parametrize(
    ("present", "message"),
    [
        ((), "pgvector is not available"),
        (("vector",), "btree_gin is not available .* contrib"),  # trusted, but needs CREATE
    ],
)
def test_server_without_permission_to_create_an_extension(
    pg_server_url: URL, empty_database_url: URL, present: tuple[str, ...], message: str
) -> None:
    role = "rb_limited_" + str(empty_database_url.database)[-6:]
    admin = make_engine(DatabaseTarget(empty_database_url, False), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE ROLE {role} LOGIN"))
        for extension in present:
            conn.execute(text(f"CREATE EXTENSION IF NOT EXISTS {extension}"))
    try:
        limited = DatabaseTarget(empty_database_url.set(username=role), False)
        engine = make_engine(limited)
        with pytest.raises(ExtensionMissing, match=message):
            connect_checked(engine, limited)
        engine.dispose()
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP ROLE {role}"))
        admin.dispose()


def test_open_database_migrates_and_reports_versions(
    empty_database_url: URL, tmp_path: Path
) -> None:
    settings = Settings(database_url=empty_database_url.render_as_string(hide_password=False))
    with open_database(settings) as opened, opened.engine.connect() as conn:
        assert opened.info.server_version.split(".")[0].isdigit()
        assert opened.info.pgvector_version is not None
        assert conn.execute(text("SELECT count(*) FROM code_chunks")).scalar_one() == 0


def test_unreachable_server_raises_database_unavailable() -> None:
    settings = Settings(database_url="postgresql://x:secretpw@127.0.0.1:1/none")
    with pytest.raises(DatabaseUnavailable) as info, open_database(settings):
        pass
    assert "secretpw" not in str(info.value)
