"""The CI mode's commands: ``review --pr URL`` and ``action`` (the GitHub Action's entry
point). Thin: they read the environment and call ``app/ci/``."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.admin import err, out, settings_from_env
from app.config import Settings
from app.errors import ConfigError

if TYPE_CHECKING:
    from app.ci.runner import CiReport
    from app.ci.target import PullTarget
    from app.task_specs import Job

IndexCache = Annotated[
    Path | None,
    typer.Option(
        "--index-cache",
        help="Folder the CI caches between runs: the index's embedded database lives there",
    ),
]
Output = Annotated[Path | None, typer.Option("--output", help="Write the run's JSON to this file")]


def review_pull(
    url: str, post: bool, output: Path | None, as_json: bool, cache: Path | None
) -> None:
    """``reviewbot review --pr URL``: the App's review of one pull or merge request."""
    from app.ci.runner import pull_request_jobs
    from app.ci.target import parse_pull_url

    settings = ci_settings(cache)
    target = parse_pull_url(url, settings.github_api_url, settings.gitlab_url)
    report = _run(settings, target, pull_request_jobs(target), post, cache)
    _emit(report, output, as_json)


def action(
    post: Annotated[
        bool, typer.Option("--post/--no-post", help="Post on the pull request (default)")
    ] = True,
    output: Output = None,
    cache: IndexCache = None,
) -> None:
    """Run as a GitHub Action: handle its event as the App would.

    The event is the one Actions gives (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH).
    """
    from app.ci.actions import event_jobs, read_event
    from app.ci.target import HostKind, PullTarget

    event = read_event(os.environ)
    settings = ci_settings(cache)
    jobs = event_jobs(event)
    if not jobs:
        err.print(f"note: nothing to do for this {event.name} event", markup=False)
        _github_output({"outcomes": {}})
        return
    repo, number = str(jobs[0].args["repo"]), int(jobs[0].args.get("pr_number", 0))
    target = PullTarget(HostKind.GITHUB, settings.github_api_url, repo, repo, number)
    report = _run(settings, target, jobs, post, cache)
    _emit(report, output, as_json=False)
    _github_output(report.as_json())


def ci_settings(cache: Path | None) -> Settings:
    """Settings from the environment, never from a ``.env`` in the checkout (the pull
    request may have written it); with an index cache, its embedded database."""
    settings = settings_from_env(dotenv=False)
    if cache is None:
        return settings
    if settings.database_url is not None:
        raise ConfigError("--index-cache keeps the index in its own database: unset DATABASE_URL")
    return settings.model_copy(update={"data_dir": cache.resolve()})


def _run(
    settings: Settings, target: PullTarget, jobs: Sequence[Job], post: bool, cache: Path | None
) -> CiReport:
    """Open the database (the cache's, checked first), run, and stamp the cache."""
    from app.ci.cache import check_cache, open_cached_database, write_stamp
    from app.ci.local import clone_at
    from app.ci.runner import run_ci
    from app.db import migrate
    from app.db.engine import open_database

    local = clone_at(Path.cwd())
    if cache is None:
        with open_database(settings) as opened:
            return run_ci(settings, opened.engine, target, jobs, post=post, local=local)
    check_cache(settings.data_dir, target.repo, migrate.known_revisions())
    with open_cached_database(settings) as opened:
        write_stamp(settings.data_dir, target.repo, migrate.current_revision(opened.engine) or "")
        return run_ci(settings, opened.engine, target, jobs, post=post, local=local)


def _emit(report: CiReport, output: Path | None, as_json: bool) -> None:
    """The run's JSON to ``output`` and (``as_json``) stdout; else what it wrote, in words."""
    data = report.as_json()
    if output is not None:
        output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if as_json:
        print(json.dumps(data, indent=2))
        return
    done = ", ".join(f"{task}: {outcome}" for task, outcome in report.outcomes.items())
    out.print(f"{report.url}: {done or 'nothing to do'}", markup=False)
    if report.posted:
        return
    review = data["review"]
    if review is not None:
        out.print("\nThe review (not posted; --post posts it):\n", markup=False)
        print(review["body"])
        for comment in review["comments"]:
            print(f"\n{comment['path']}:{comment['line']}\n{comment['body']}")
    if data["description"] is not None:
        out.print("\nThe description (not posted):\n", markup=False)
        print(data["description"])


def _github_output(data: dict[str, object]) -> None:
    """``review=<the run's JSON>`` in the step's outputs (``$GITHUB_OUTPUT``), if any."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    delimiter = f"reviewbot_{secrets.token_hex(8)}"
    with open(path, "a", encoding="utf-8") as file:
        file.write(f"review<<{delimiter}\n{json.dumps(data)}\n{delimiter}\n")
