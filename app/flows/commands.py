"""Commands written as PR comments: ``/review``, ``/describe`` and ``/reindex`` for users
with write access (acknowledged with a 👀 reaction), ``/help`` for anyone."""

from __future__ import annotations

import logging

from app.flows.index import index_repository
from app.flows.review import review_pull_request
from app.flows.review_config import repository_review_config
from app.forge.protocol import RepoHost
from app.logs import kv
from app.review.help import help_markdown
from app.runtime import Runtime

log = logging.getLogger(__name__)
WRITE_PERMISSIONS = {"admin", "maintain", "write"}


def help_marker(comment_id: int | None) -> str:
    return f"<!-- reviewbot:help={comment_id} -->"


def run_command(
    run: Runtime,
    repo: str,
    installation_id: int,
    pr_number: int,
    command: str,
    user: str | None,
    comment_id: int | None,
    job_id: int | None = None,
) -> str:
    """Run one command; returns what happened (for logs and tests). ``job_id``: the
    queued job running it, whose retries reuse the model answers it paid for."""
    api = run.host.repository(installation_id, repo)
    if command == "help":
        return answer_help(run, api, pr_number, comment_id)
    permission = api.permission(user) if user else "none"
    if permission not in WRITE_PERMISSIONS:
        log.info(kv("command.refused", repo=repo, pr=pr_number, command=command, user=user))
        return "refused"
    if comment_id is not None:
        api.react(pr_number, comment_id, "eyes")
    if command == "review":
        admin = permission == "admin"
        return review_pull_request(
            run, repo, installation_id, pr_number, full=True, over_budget=admin, job_id=job_id
        )
    if command == "describe":
        from app.flows.describe import describe_pull_request

        return describe_pull_request(
            run, repo, installation_id, pr_number, asked=True, job_id=job_id
        )
    index_repository(run, repo, installation_id, full=True)
    return "reindexed"


def answer_help(run: Runtime, api: RepoHost, pr_number: int, comment_id: int | None) -> str:
    """The commands and the repository's effective settings, once per asking comment (a
    retry finds its marker and does not post again)."""
    marker = help_marker(comment_id)
    if any(marker in c.body for c in api.issue_comments(pr_number)):
        return "already answered"
    config = repository_review_config(api, pr_number)
    api.comment(pr_number, help_markdown(config, run.settings) + f"\n{marker}")
    return "answered"
