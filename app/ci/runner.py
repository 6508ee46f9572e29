"""One CI run: the jobs the App would run for an event, run here and now, with a token.

The base of the pull request is indexed (from the job's clone when it has the commit,
else the host's archive; only what changed since the cached index), the history mined,
the PR's review state read back from its markers, and then the same flows the App's
workers run: the review, its walkthrough and merge gate, the description, commands and
answers. What they write is recorded (``app/ci/tap.py``) and, with ``post``, posted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from app.ci.hosts import token_host
from app.ci.state import restore_review_state
from app.ci.tap import Tap, Written
from app.ci.target import HostKind, PullTarget
from app.config import Settings
from app.db.queries.repositories import repository_id
from app.errors import ConfigError
from app.flows import conversation
from app.flows.commands import run_command
from app.flows.describe import describe_pull_request
from app.flows.enrich import enrich_repository
from app.flows.index import index_at, index_repository, update_history
from app.flows.review import review_pull_request
from app.forge.hosts import WrappedHost
from app.forge.protocol import ForgeError, RepoHost
from app.git import GitError, LocalRepo
from app.indexing.history import HistoryLimits, mine_history
from app.indexing.report import IndexBusy
from app.logs import kv
from app.runtime import Runtime
from app.task_specs import Job, TaskName, describe_job, review_job

log = logging.getLogger(__name__)
#: In the CI mode the repository is reached with a token, not an installation.
NO_INSTALLATION = 0


@dataclass
class CiReport:
    """What a run did: each job's outcome, and what it wrote (or would have)."""

    url: str
    repo: str
    number: int
    head: str
    posted: bool
    outcomes: dict[str, str] = field(default_factory=dict)
    written: Written = field(default_factory=Written)

    def as_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "repository": self.repo,
            "number": self.number,
            "head": self.head,
            "posted": self.posted,
            "outcomes": self.outcomes,
            **self.written.as_json(),
        }


def pull_request_jobs(target: PullTarget) -> list[Job]:
    """What an opened or updated pull request asks for: its review and description."""
    return [
        review_job(target.repo, NO_INSTALLATION, target.number),
        describe_job(target.repo, NO_INSTALLATION, target.number),
    ]


def run_ci(
    settings: Settings,
    engine: Engine,
    target: PullTarget,
    jobs: Sequence[Job],
    *,
    post: bool,
    local: LocalRepo | None,
) -> CiReport:
    """Index, restore the review state, then run ``jobs`` on ``target`` (number 0: jobs
    of no pull request, a push's). ``ConfigError`` naming the fix when the host refuses
    the token or knows no such pull request."""
    written = Written()
    host = WrappedHost(token_host(settings, target, local), lambda api: Tap(api, written, post))
    run = Runtime(settings, engine, code_host=host)
    report = CiReport(
        host.pull_url(target.repo, target.number),
        target.repo,
        target.number,
        "",
        post,
        written=written,
    )
    try:
        if target.number:
            api = host.repository(NO_INSTALLATION, target.repo)
            pr = api.pull(target.number)
            report.head = pr.head_sha
            prepare_index(run, api, target.repo, pr.base_sha, local)
            restore_review_state(run, api, target.repo, NO_INSTALLATION, pr)
        for job in jobs:
            name, runner = RUNNERS[job.task]
            report.outcomes[name] = str(runner(run, job.args))
    except ForgeError as exc:
        refused = refusal(exc, target)
        if refused is None:
            raise
        raise refused from None
    return report


def prepare_index(
    run: Runtime, api: RepoHost, repo: str, base: str, local: LocalRepo | None
) -> None:
    """Bring the index to the pull request's base (only what changed since the index the
    cache holds), its history, and (within the job's model budget) its summaries and
    vectors, which the cache keeps for the next run."""
    branch = api.default_branch()
    with run.engine.begin() as conn:
        repository_id(conn, repo, installation_id=NO_INSTALLATION, default_branch=branch)
    index_at(run, api, repo, base)
    if local is not None and has_commit(local, base):
        limits = HistoryLimits(max_commits=run.settings.history_max_commits)
        try:
            if run.settings.history_days > 0:
                mine_history(run.engine, repo, local, base, limits)
        except (GitError, IndexBusy) as exc:
            log.warning(kv("history.skipped", repo=repo, error=exc))
    else:
        update_history(run, repo, NO_INSTALLATION, branch)
    enrich_repository(run, repo)


def has_commit(local: LocalRepo, commit: str) -> bool:
    try:
        local.resolve(commit)
    except GitError:
        return False
    return True


def refusal(exc: ForgeError, target: PullTarget) -> ConfigError | None:
    """The error naming the fix for a refusal by the host, or None for other failures."""
    github = target.kind is HostKind.GITHUB
    variable = "GITHUB_TOKEN" if github else "GITLAB_TOKEN"
    if exc.status == 401:
        return ConfigError(f"the host refused {variable} (401): set a valid, unexpired token")
    if exc.status == 403:
        rights = (
            "`contents: read`, `pull-requests: write`, `checks: write` (and `issues: write`"
            " for comments)"
            if github
            else "the api scope and at least the Developer role"
        )
        return ConfigError(
            f"{variable} may not do this on {target.path} (403): give the token {rights};"
            f" the host said: {exc}"
        )
    if exc.status == 404:
        kind = "pull request" if github else "merge request"
        return ConfigError(
            f"no {kind} {target.number} in {target.path}, or {variable} cannot read it (404):"
            " check the URL and give the token read access to the repository"
        )
    return None


def index_default_branch(run: Runtime, repo: str, installation_id: int, full: bool) -> str:
    """A push to the default branch: its index (and summaries, vectors), for the cache."""
    report = index_repository(run, repo, installation_id, full)
    enrich_repository(run, repo)
    return f"indexed ({report.files_changed} files changed)"


Runner = Callable[[Runtime, dict[str, Any]], object]
#: What each job is called in a run's report, and the flow it runs, as the App's workers
#: run them (``app/jobs/tasks.py``).
RUNNERS: dict[TaskName, tuple[str, Runner]] = {
    TaskName.REVIEW: ("review", lambda run, a: review_pull_request(run, **a)),
    TaskName.DESCRIBE: ("describe", lambda run, a: describe_pull_request(run, **a)),
    TaskName.COMMAND: ("command", lambda run, a: run_command(run, **a)),
    TaskName.ANSWER_QUESTION: ("ask", lambda run, a: conversation.answer_question(run, **a)),
    TaskName.ANSWER_REPLY: ("reply", lambda run, a: conversation.answer_reply(run, **a)),
    TaskName.INDEX: ("index", lambda run, a: index_default_branch(run, **a)),
}
