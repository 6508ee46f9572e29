"""``reviewbot`` commands that set the bot up and look after it: ``setup``, ``doctor``,
``config check`` and ``feedback``. ``app/cli.py`` registers them beside the commands
that run it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from app.config import Settings, load_settings
from app.errors import ConfigError, ReviewbotError

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def settings_from_env() -> Settings:
    """The settings from the environment (and ``REVIEWBOT_ENV_FILE``), logging set up."""
    from app.logs import configure_logging

    settings = load_settings()
    configure_logging(settings)
    return settings


config_cli = typer.Typer(help="Check a .reviewbot.toml.", no_args_is_help=True)


@config_cli.command("check")
def config_check(
    path: Annotated[
        Path, typer.Argument(help="The file, or a folder holding .reviewbot.toml")
    ] = Path(".reviewbot.toml"),
) -> None:
    """Validate a .reviewbot.toml (its \\[index] and \\[review] tables) as the bot
    would read it."""
    from app.review.config import check_config

    if path.is_dir():
        path = path / ".reviewbot.toml"
    if not path.is_file():
        raise ConfigError(f"{path} does not exist")
    for line in check_config(path.read_text(encoding="utf-8", errors="replace"), str(path)):
        out.print(line, markup=False)
    out.print(f"{path}: ok", markup=False)


feedback_cli = typer.Typer(
    help="What reviewbot learned from reactions to its comments.", no_args_is_help=True
)


REPO_HELP = "Repository: owner/name, or instance/group/project on GitLab"


@feedback_cli.command("list")
def feedback_list(
    repo: Annotated[str, typer.Option(help=REPO_HELP)],
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON")] = False,
) -> None:
    """The bot's comments people reacted to or resolved, and the verdict on each."""
    from app.cli_render import feedback_table
    from app.db.engine import open_database
    from app.db.queries.review_feedback import feedback_of

    with open_database(settings_from_env()) as opened, opened.engine.connect() as conn:
        rows = feedback_of(conn, repo)
    if as_json:
        print(json.dumps([vars(r) for r in rows], indent=2))
    else:
        out.print(feedback_table(repo, rows))


@feedback_cli.command("forget")
def feedback_forget(
    repo: Annotated[str, typer.Option(help=REPO_HELP)],
) -> None:
    """Clear what was learned in a repository: rejected findings may be raised again."""
    from app.db.engine import open_database
    from app.db.queries.review_feedback import forget_feedback

    with open_database(settings_from_env()) as opened, opened.engine.begin() as conn:
        forgotten = forget_feedback(conn, repo)
    out.print(f"{repo}: forgot feedback on {forgotten} comment(s)", markup=False)


def setup(
    public_url: Annotated[
        str, typer.Option(help="Where GitHub will reach `reviewbot serve` (https://...)")
    ],
    org: Annotated[
        str | None, typer.Option(help="Create the App for this organisation (default: you)")
    ] = None,
    name: Annotated[str, typer.Option(help="The App's name on GitHub")] = "reviewbot",
    env_file: Annotated[
        Path, typer.Option(help="Credentials file to write (0600); the key goes beside it")
    ] = Path(".env"),
    force: Annotated[bool, typer.Option("--force", help="Replace credentials there")] = False,
    host: Annotated[str, typer.Option(help="Serve the set-up page on this address")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(min=0, max=65535, help="...and port (0: any)")] = 8000,
    page_url: Annotated[
        str | None, typer.Option(help="The page's address in a browser, if not host:port")
    ] = None,
    github_url: Annotated[
        str, typer.Option(help="GitHub's API (GitHub Enterprise: https://HOST/api/v3)")
    ] = "https://api.github.com",
    browser: Annotated[bool, typer.Option(help="Open the page in a browser")] = True,
) -> None:
    """Create the GitHub App in one click (GitHub's manifest flow) and write its
    credentials where `serve` reads them."""
    import webbrowser

    from app.github.setup import SetupRequest, run_setup

    if not public_url.startswith(("https://", "http://")):
        raise ConfigError(f"--public-url {public_url!r} is not an http(s) address")
    request = SetupRequest(
        api_url=github_url.rstrip("/"),
        public_url=public_url,
        env_file=env_file,
        name=name,
        organization=org,
        force=force,
    )

    def ready(url: str) -> None:
        out.print(f"Open {url} and press the button to create the App on GitHub.", markup=False)
        if browser:
            webbrowser.open(url)

    done = run_setup(request, host, port, ready, page_url=page_url)
    out.print(
        f"Created the GitHub App {done.app.slug or done.app.id} (id {done.app.id}); wrote "
        f"{done.env_file} and {done.key_file} (readable by you only).",
        markup=False,
    )
    if done.app.html_url:
        out.print(f"Install it: {done.app.html_url}/installations/new", markup=False)
    start = "" if env_file == Path(".env") else f"REVIEWBOT_ENV_FILE={env_file} "
    out.print(f"Start with: {start}reviewbot serve", markup=False)


def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON")] = False,
) -> None:
    """Check the whole installation: database, queue, App, webhooks, models, disk."""
    from app.checks import Check
    from app.db.engine import open_database
    from app.flows.doctor import checks_json, run_checks
    from app.github.checks import github_checks
    from app.gitlab.checks import gitlab_checks, gitlab_wanted

    settings = settings_from_env()
    # GitHub is checked unless the deployment is for GitLab alone
    hosts = github_checks(settings) if settings.github_app_configured else []
    if gitlab_wanted(settings):
        hosts += gitlab_checks(settings)
    else:
        hosts = github_checks(settings)
    try:
        with open_database(settings, migrate=False) as opened:
            embedded = opened.target.embedded
            checks = run_checks(settings, opened.engine, embedded, hosts)
    except ReviewbotError as exc:  # no database: say so, and check the rest
        checks = [Check("database", False, str(exc), "set DATABASE_URL, or unset it")]
        rest = run_checks(settings, None, False, hosts)
        checks += [c for c in rest if c.name != "database"]
    if as_json:
        print(json.dumps(checks_json(checks), indent=2))
    else:
        for check in checks:
            out.print(check.line(), markup=False)
    if not all(c.ok for c in checks):
        raise typer.Exit(1)
