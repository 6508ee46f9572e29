import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy.engine import URL
from typer.testing import CliRunner

from app.cli import cli
from app.db.migrate import head_revision
from tests.processes import clean_env

runner = CliRunner()


def test_db_command_shows_versions_and_schema(cli_env: URL) -> None:
    result = runner.invoke(cli, ["db"])
    assert result.exit_code == 0, result.output
    assert "pgvector" in result.output and "0.8" in result.output
    assert "embedded    no" in result.output
    assert f"(head {head_revision()})" in result.output


def test_migrate_twice_is_fine(empty_database_url: URL, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DATABASE_URL", empty_database_url.render_as_string(hide_password=False))
    first = runner.invoke(cli, ["migrate"])
    second = runner.invoke(cli, ["migrate"])
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    assert f"at revision {head_revision()}" in second.output


def test_commands_started_together_share_one_embedded_server(tmp_path: Path) -> None:
    """Four `reviewbot db` at once on a fresh data folder (the first start, with initdb),
    then four more on the existing one: every one answers, none with a traceback. They
    used to race in making the folder and in the wheel's list of the server's users."""
    env = clean_env(REVIEWBOT_DATA_DIR=str(tmp_path / "data"))
    for round_ in ("fresh", "existing"):
        commands = [
            subprocess.Popen(
                [sys.executable, "-m", "app.cli", "db"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(4)
        ]
        said = [c.communicate(timeout=180) for c in commands]
        for command, (out, err) in zip(commands, said, strict=True):
            assert command.returncode == 0, (round_, err.decode())
            assert b"Traceback" not in err and b"pgvector" in out
    with psutil_processes_of(tmp_path / "data") as left:
        assert left == []  # the last user stopped the server


@contextlib.contextmanager
def psutil_processes_of(data_dir: Path) -> Iterator[list[int]]:
    """The postgres processes still serving ``data_dir`` (after a moment to stop)."""
    import time

    import psutil

    deadline = time.monotonic() + 20
    while True:
        alive = [
            p.pid
            for p in psutil.process_iter(attrs=["name", "cmdline"])
            if p.info["name"] == "postgres" and str(data_dir) in " ".join(p.info["cmdline"] or [])
        ]
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    yield alive
