"""``reviewbot`` commands that set the bot up and look after it: ``setup``, ``doctor``,
``config check`` and ``feedback``. ``app/cli/run.py`` registers them beside the commands
that run it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from app.config import Settings, load_settings
from app.errors import ConfigError, ReviewbotError
from app.wording import counted

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def settings_from_env(dotenv: bool = True) -> Settings:
    """The settings from the environment (and ``REVIEWBOT_ENV_FILE``, and with ``dotenv``
    the working folder's ``.env``), logging set up."""
    from app.logs import configure_logging

    settings = load_settings(dotenv=dotenv)
    configure_logging(settings)
    return settings


config_cli = typer.Typer(
    help="Check a .reviewbot.toml.", no_args_is_help=True, rich_markup_mode=None
)


@config_cli.command("check")
def config_check(
    path: Annotated[
        Path, typer.Argument(help="The file, or a folder holding .reviewbot.toml")
    ] = Path(".reviewbot.toml"),
) -> None:
    """Validate a .reviewbot.toml as the bot reads it.

    Its [index] and [review] tables, every key, with one line per problem.
    """
    from app.review.config import check_config

    if path.is_dir():
        path = path / ".reviewbot.toml"
    if not path.is_file():
        raise ConfigError(f"{path} does not exist")
    for line in check_config(path.read_text(encoding="utf-8", errors="replace"), str(path)):
        out.print(line, markup=False)
    out.print(f"{path}: ok", markup=False)


feedback_cli = typer.Typer(
    help="What reviewbot learned from reactions to its comments.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


REPO_HELP = "Repository: owner/name, or instance/group/project on GitLab"


@feedback_cli.command("list")
def feedback_list(
    repo: Annotated[str, typer.Option(help=REPO_HELP)],
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON")] = False,
) -> None:
    """The bot's comments people reacted to or resolved, and the verdict on each."""
    from app.cli.render import feedback_table
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
    out.print(f"{repo}: forgot feedback on {counted(forgotten, 'comment')}", markup=False)


def setup(
    forge: Annotated[
        str, typer.Argument(help="github (the App) or gitlab (a project's or group's webhook)")
    ] = "github",
    public_url: Annotated[
        str | None,
        typer.Option(help="Where GitHub will reach `reviewbot serve` (https://...)"),
    ] = None,
    org: Annotated[
        str | None, typer.Option(help="Create the App for this organisation (default: you)")
    ] = None,
    name: Annotated[str, typer.Option(help="The App's name on GitHub")] = "reviewbot",
    env_file: Annotated[
        Path, typer.Option(help="Credentials file to write (0600), key included")
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
    code: Annotated[
        str | None,
        typer.Option(help="Retry the exchange of GitHub's one-time code (no page served)"),
    ] = None,
    project: Annotated[
        str | None, typer.Option(help="gitlab: the project's path (group/project)")
    ] = None,
    group: Annotated[str | None, typer.Option(help="gitlab: a group's path instead")] = None,
) -> None:
    """Create the GitHub App, or a GitLab webhook.

    `setup gitlab --project PATH --public-url URL` makes the project's (or `--group`'s)
    webhook with a fresh secret through GitLab's API (GITLAB_URL, GITLAB_TOKEN of a
    Maintainer) and writes GITLAB_URL and GITLAB_WEBHOOK_SECRET.

    GitHub's manifest flow: a local page posts reviewbot's manifest to GitHub, which
    creates the App and sends back a one-time code; the code is exchanged for the App's
    id, key and secrets. If that exchange fails, `--code CODE` retries it.
    """
    import webbrowser

    from app.github.setup import SetupRequest, exchange, run_setup

    if forge == "gitlab":
        _setup_gitlab(public_url, project, group, env_file, force)
        return
    if forge != "github":
        raise ConfigError(f"setup {forge!r}: say github or gitlab")

    if code is None and public_url is None:
        raise ConfigError("give --public-url (where GitHub will reach `reviewbot serve`)")
    if public_url is not None and not public_url.startswith(("https://", "http://")):
        raise ConfigError(f"--public-url {public_url!r} is not an http(s) address")
    request = SetupRequest(
        api_url=github_url.rstrip("/"),
        public_url=public_url or "",
        env_file=env_file,
        name=name,
        organization=org,
        force=force,
    )

    def ready(url: str) -> None:
        out.print(f"Open {url} and press the button to create the App on GitHub.", markup=False)
        if browser:
            webbrowser.open(url)

    if code is not None:
        done = exchange(request, code)
    else:
        done = run_setup(request, host, port, ready, page_url=page_url)
    out.print(
        f"Created the GitHub App {done.app.slug or done.app.id} (id {done.app.id}); wrote its"
        f" credentials to {done.env_file} (readable by you only).",
        markup=False,
    )
    if done.app.html_url:
        out.print(f"Install it: {done.app.html_url}/installations/new", markup=False)
    start = "" if env_file == Path(".env") else f"REVIEWBOT_ENV_FILE={env_file} "
    out.print(
        f"Start with: {start}reviewbot serve, or `docker compose up -d` beside that file",
        markup=False,
    )


def _setup_gitlab(
    public_url: str | None, project: str | None, group: str | None, env_file: Path, force: bool
) -> None:
    """``setup gitlab``: the webhook through GitLab's API (``GITLAB_URL``, ``GITLAB_TOKEN``)."""
    from app.gitlab.client import GitLabClient
    from app.gitlab.setup import GitLabSetup, setup_gitlab, token_or_refuse
    from app.tls import ssl_context

    if public_url is None or not public_url.startswith(("https://", "http://")):
        raise ConfigError("give --public-url, the https address where GitLab reaches serve")
    if (project is None) == (group is None):
        raise ConfigError("give --project PATH or --group PATH (the webhook's owner)")
    settings = settings_from_env()
    path = project or group or ""
    client = GitLabClient(
        settings.gitlab_url, token_or_refuse(settings.gitlab_token), verify=ssl_context(settings)
    )
    request = GitLabSetup(
        settings.gitlab_url, path, public_url, env_file, group=group is not None, force=force
    )
    made = setup_gitlab(request, client)
    how = "gave a new secret to" if made.replaced else "made"
    out.print(
        f"GitLab: {how} the webhook {made.hook_id} of {path} to {made.url} (merge requests,"
        f" comments, pushes); wrote GITLAB_URL and GITLAB_WEBHOOK_SECRET to {env_file}"
        " (readable by you only). Set GITLAB_TOKEN there to the bot's token (api scope,"
        " Developer), then start reviewbot serve.",
        markup=False,
    )


NO_HOST_NOTE = (
    "No code host is configured, so only what the CLI needs is checked (review, index,"
    " search). For the App on GitHub run `reviewbot setup`; on GitLab set GITLAB_TOKEN and"
    ' run `reviewbot setup gitlab` (README, "Set up on GitLab").'
)


def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON")] = False,
    cli_only: Annotated[
        bool, typer.Option("--cli", help="Check only what the CLI needs, even with a code host")
    ] = False,
) -> None:
    """Check the installation and say what to fix.

    Database, job queue, code hosts and webhooks, models, git and disk, each ok or
    what is wrong and its fix.
    """
    from app.checks import Check
    from app.db.engine import open_database
    from app.flows.doctor import checks_json, run_checks
    from app.github.checks import github_checks
    from app.gitlab.checks import gitlab_checks, gitlab_wanted

    settings = settings_from_env()
    server = not cli_only and (settings.github_app_configured or gitlab_wanted(settings))
    hosts = []
    if server and (settings.github_app_configured or settings.github_webhook_secret):
        hosts += github_checks(settings)
    if server and gitlab_wanted(settings):
        hosts += gitlab_checks(settings, _gitlab_projects)
    if not server and not as_json:
        out.print(NO_HOST_NOTE, markup=False)
    try:
        with open_database(settings, migrate=False) as opened:
            embedded = opened.target.embedded
            checks = run_checks(settings, opened.engine, embedded, hosts, server=server)
    except ReviewbotError as exc:  # no database: say so, and check the rest
        checks = [Check("database", False, str(exc), "set DATABASE_URL, or unset it")]
        rest = run_checks(settings, None, False, hosts, server=server)
        checks += [c for c in rest if c.name != "database"]
    if as_json:
        print(json.dumps({"mode": "server" if server else "cli", **checks_json(checks)}, indent=2))
    else:
        for check in checks:
            out.print(check.line(), markup=False)
    if not all(c.ok for c in checks):
        raise typer.Exit(1)


def _gitlab_projects(settings: Settings, most: int = 20) -> list[str]:
    """The paths of the GitLab projects the database knows on ``settings.gitlab_url``, for
    doctor's per-project checks; none when the database cannot be read."""
    from sqlalchemy.exc import DBAPIError

    from app.db.engine import open_database
    from app.db.queries.repositories import known_repositories
    from app.gitlab.records import instance_name, project_path

    prefix = instance_name(settings.gitlab_url) + "/"
    try:
        with open_database(settings, migrate=False) as opened, opened.engine.connect() as conn:
            names = known_repositories(conn, limit=10_000)
    except (ReviewbotError, DBAPIError):  # no database, or one not yet migrated
        return []
    return [project_path(settings.gitlab_url, n) for n in names if n.startswith(prefix)][:most]


def healthcheck(
    http: Annotated[
        bool, typer.Option("--http", help="Ask serve's /healthz, whatever the heartbeat says")
    ] = False,
) -> None:
    """Exit 0 while this container's process is healthy.

    For Docker's HEALTHCHECK. A worker (and serve, which runs one by default) is
    healthy while the heartbeat file it touches (REVIEWBOT_HEARTBEAT_FILE) is younger
    than three heartbeats (half of REVIEWBOT_STALLED_WORKER_SECONDS); without that
    file, or with --http, serve's GET /healthz must answer 200.
    """
    from app.jobs.heartbeat import heartbeat_age

    settings = load_settings()
    beat = settings.heartbeat_file
    age = heartbeat_age(beat) if beat is not None and not http else None
    if age is not None:
        limit = settings.worker_alive_seconds
        if age > limit:
            raise ReviewbotError(
                f"the worker's last heartbeat is {age:.0f} s old (limit {limit:g} s)"
            )
        out.print(f"ok: worker heartbeat {age:.0f} s old", markup=False)
        return
    import httpx

    url = f"http://127.0.0.1:{settings.port}/healthz"
    try:
        status = httpx.get(url, timeout=5.0).status_code
    except httpx.HTTPError as exc:
        raise ReviewbotError(f"{url}: {type(exc).__name__}") from None
    if status != 200:
        raise ReviewbotError(f"{url} answered HTTP {status}")
    out.print(f"ok: {url} answered 200", markup=False)
