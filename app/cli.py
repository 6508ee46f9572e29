"""The ``reviewbot`` command. Each command is a thin adapter over the modules it calls."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from app.config import Settings, load_settings
from app.errors import ReviewbotError

cli = typer.Typer(
    name="reviewbot",
    help="Self-hostable pull-request review bot.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(soft_wrap=True)


def _settings() -> Settings:
    from app.logs import configure_logging

    settings = load_settings()
    configure_logging(settings)
    return settings


@cli.command()
def migrate() -> None:
    """Apply database migrations (idempotent)."""
    from app.db import migrate as migrations
    from app.db.engine import open_database

    with open_database(_settings()) as opened:
        revision = migrations.current_revision(opened.engine)
        out.print(f"database {opened.target.display} is at revision {revision}")


@cli.command()
def db() -> None:
    """Show which database is in use, and its PostgreSQL and pgvector versions."""
    from app.db import migrate as migrations
    from app.db.engine import open_database

    with open_database(_settings(), migrate=False) as opened:
        revision = migrations.current_revision(opened.engine)
    table = Table(show_header=False, box=None)
    table.add_row("database", opened.target.display)
    table.add_row("embedded", "yes" if opened.target.embedded else "no")
    table.add_row("postgresql", opened.info.server_version)
    table.add_row("pgvector", opened.info.pgvector_version or "not installed")
    table.add_row("schema", f"{revision} (head {migrations.head_revision()})")
    out.print(table)


@cli.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default: settings)")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: settings)")] = None,
) -> None:
    """Run the HTTP API (migrates first)."""
    import uvicorn

    from app.api.main import create_app
    from app.db.engine import open_database

    settings = _settings()
    host, port = host or settings.host, port or settings.port
    with open_database(settings) as opened:
        out.print(
            f"reviewbot on http://{host}:{port} using {opened.target.display} "
            f"(PostgreSQL {opened.info.server_version}, pgvector {opened.info.pgvector_version})"
        )
        uvicorn.run(create_app(settings, opened.engine), host=host, port=port, log_config=None)


def main() -> None:
    """Console-script entry point: expected failures print one line, exit 1, no traceback."""
    try:
        cli()
    except ReviewbotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
