from sqlalchemy.engine import URL
from typer.testing import CliRunner

from app.cli import cli
from app.db.migrate import head_revision

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
