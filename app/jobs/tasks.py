"""Tasks. Each one is a thin adapter over a function in ``app.flows``.

Every failed run is logged and recorded in ``job_errors`` (secret-free, one line), with
whether it will be retried: see ``app.jobs.retry`` for which failures are transient.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from procrastinate import JobContext
from procrastinate.exceptions import AlreadyEnqueued
from sqlalchemy.exc import DBAPIError

from app.db.queries.job_errors import prune_job_errors, record_job_error
from app.db.queries.repositories import enrich_pending
from app.errors import ReviewbotError
from app.flows import (
    commands,
    conversation,
    describe,
    enrich,
    feedback,
    index,
    review,
)
from app.github import redelivery
from app.jobs.queue import RETRY, queue, recover_stalled_jobs, runtime
from app.jobs.retry import is_transient
from app.logs import kv, mask_secrets, secret_values
from app.task_specs import Job, RepositoryArgs, TaskName, enrich_lock

FINISHED_JOBS_KEPT_HOURS = 24 * 7
log = logging.getLogger(__name__)
R = TypeVar("R")


def describe_failure(exc: BaseException, secrets: list[str]) -> str:
    """One secret-free line: our own errors say what happened; others name their type."""
    if isinstance(exc, ReviewbotError):
        message = str(exc)
    else:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        message = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return mask_secrets(message, secrets)


def recorded(fn: Callable[..., R]) -> Callable[..., R]:
    """Log and record why a run failed, then let procrastinate's retry policy decide."""

    @functools.wraps(fn)
    def wrapper(context: JobContext, *args: Any, **kwargs: Any) -> R:
        try:
            return fn(context, *args, **kwargs)
        except Exception as exc:
            _record_failure(context, exc)
            raise

    return wrapper


def _record_failure(context: JobContext, exc: Exception) -> None:
    run = runtime(context)
    job = context.job
    transient = is_transient(exc)
    retried = RETRY.get_retry_decision(exception=exc, job=job) is not None
    message = describe_failure(exc, secret_values(run.settings))
    log.log(
        logging.WARNING if retried else logging.ERROR,
        kv(
            "job.failed",
            job_id=job.id,
            task=job.task_name,
            attempt=job.attempts + 1,
            transient=transient,
            retried=retried,
            error=message,
        ),
        # our own errors say what happened, transient ones will pass; anything else is a
        # bug, logged with its traceback (secrets masked)
        exc_info=None if isinstance(exc, ReviewbotError) or transient else exc,
    )
    try:
        with run.engine.begin() as conn:
            record_job_error(conn, job.id, job.task_name, job.attempts + 1, transient, message)
    except DBAPIError:  # the database is what failed: the log line above has it
        log.warning(kv("job.error_not_recorded", job_id=job.id))


@queue.task(name=TaskName.REVIEW, pass_context=True, retry=RETRY)
@recorded
def review_pull_request(
    context: JobContext, repo: str, installation_id: int, pr_number: int, full: bool = False
) -> None:
    try:
        review.review_pull_request(
            runtime(context), repo, installation_id, pr_number, full=full, job_id=context.job.id
        )
    finally:  # a first review indexes the repository itself
        _enrich_if_pending(context, repo)


@queue.task(name=TaskName.DESCRIBE, pass_context=True, retry=RETRY)
@recorded
def describe_pull_request(
    context: JobContext, repo: str, installation_id: int, pr_number: int
) -> None:
    describe.describe_pull_request(
        runtime(context), repo, installation_id, pr_number, job_id=context.job.id
    )


@queue.task(name=TaskName.INDEX, pass_context=True, retry=RETRY)
@recorded
def index_repository(context: JobContext, repo: str, installation_id: int, full: bool) -> None:
    index.index_repository(runtime(context), repo, installation_id, full=full)
    _enrich_if_pending(context, repo)


@queue.task(name=TaskName.ENRICH, pass_context=True, retry=RETRY)
@recorded
def enrich_repository(context: JobContext, repo: str) -> None:
    """Summaries and vectors of the rows an index run stored without them. A run that made
    progress but stopped (the job's model time ran out) queues the next; one that made
    none (the model is down) ends the chain, and the next index run starts it again."""
    outcome = enrich.enrich_repository(runtime(context), repo)
    if not outcome.finished and not outcome.busy and outcome.updated:
        _enrich_later(context, repo)


def _enrich_if_pending(context: JobContext, repo: str) -> None:
    """After a review, which indexes a repository it finds without an index. Never hides
    the review's own failure: a database that fails here is only logged."""
    try:
        with runtime(context).engine.connect() as conn:
            pending = enrich_pending(conn, repo)
        if pending:
            _enrich_later(context, repo)
    except DBAPIError as exc:
        log.warning(kv("enrich.not_queued", repo=repo, error=type(exc).__name__))


def _enrich_later(context: JobContext, repo: str) -> None:
    """Queue the repository's enrichment, unless it is waiting already."""
    job = Job(TaskName.ENRICH, RepositoryArgs(repo), queueing_lock=enrich_lock(repo))
    with contextlib.suppress(AlreadyEnqueued):
        context.app.configure_task(job.task, queueing_lock=job.queueing_lock).defer(**job.args)


@queue.task(name=TaskName.PURGE, pass_context=True, retry=RETRY)
@recorded
def purge_repository(context: JobContext, repo: str) -> None:
    index.purge_repository(runtime(context), repo)


@queue.task(name=TaskName.COMMAND, pass_context=True, retry=RETRY)
@recorded
def pr_command(
    context: JobContext,
    repo: str,
    installation_id: int,
    pr_number: int,
    command: str,
    user: str | None,
    comment_id: int | None,
) -> None:
    commands.run_command(
        runtime(context),
        repo,
        installation_id,
        pr_number,
        command,
        user,
        comment_id,
        job_id=context.job.id,
    )


@queue.periodic(cron="* * * * *", periodic_id="retry_stalled_jobs")
@queue.task(name="retry_stalled_jobs", queueing_lock="retry_stalled_jobs", pass_context=True)
async def retry_stalled_jobs(context: JobContext, timestamp: int) -> None:
    """Jobs whose worker stopped sending heartbeats (a crash) go back to the queue."""
    await recover_stalled_jobs(context.app, runtime(context).settings.stalled_worker_seconds)


@queue.periodic(cron="*/5 * * * *", periodic_id="recover_missed_deliveries")
@queue.task(
    name="recover_missed_deliveries",
    queueing_lock="recover_missed_deliveries",
    pass_context=True,
    retry=RETRY,
)
@recorded
def recover_missed_deliveries(context: JobContext, timestamp: int) -> None:
    """Deliveries GitHub could not make while reviewbot was down are asked for again."""

    run = runtime(context)
    if not run.settings.github_app_configured or run.settings.redelivery_window_hours <= 0:
        return
    asked = redelivery.recover_missed_deliveries(
        run.github, run.engine, run.settings.redelivery_window_hours
    )
    if asked:
        log.warning(kv("webhook.redeliveries_requested", count=asked))


@queue.periodic(cron="17 * * * *", periodic_id="prune_finished_jobs")
@queue.task(name="prune_finished_jobs", queueing_lock="prune_finished_jobs", pass_context=True)
async def prune_finished_jobs(context: JobContext, timestamp: int) -> None:
    """Finished jobs stay a week (for GET /reindex/{id} and /metrics), then go."""
    await context.app.job_manager.delete_old_jobs(
        nb_hours=FINISHED_JOBS_KEPT_HOURS, include_failed=True
    )
    with runtime(context).engine.begin() as conn:
        prune_job_errors(conn, FINISHED_JOBS_KEPT_HOURS)


@queue.task(name=TaskName.ANSWER_QUESTION, pass_context=True, retry=RETRY)
@recorded
def answer_question(
    context: JobContext,
    repo: str,
    installation_id: int,
    pr_number: int,
    question: str,
    user: str | None,
    comment_id: int,
) -> None:
    try:
        conversation.answer_question(
            runtime(context), repo, installation_id, pr_number, question, user, comment_id
        )
    finally:  # a first question indexes the repository itself
        _enrich_if_pending(context, repo)


@queue.task(name=TaskName.ANSWER_REPLY, pass_context=True, retry=RETRY)
@recorded
def answer_reply(
    context: JobContext,
    repo: str,
    installation_id: int,
    pr_number: int,
    comment_id: int,
    parent_id: int | None,
    said: str,
    user: str | None,
) -> None:
    try:
        conversation.answer_reply(
            runtime(context), repo, installation_id, pr_number, comment_id, parent_id, said, user
        )
    finally:
        _enrich_if_pending(context, repo)


@queue.task(name=TaskName.COLLECT_FEEDBACK, pass_context=True, retry=RETRY)
@recorded
def collect_feedback(context: JobContext, repo: str, installation_id: int, pr_number: int) -> None:
    feedback.collect_feedback(runtime(context), repo, installation_id, pr_number)
