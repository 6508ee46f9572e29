"""Tasks. Each one is a thin adapter over a function in app.github."""

from __future__ import annotations

from procrastinate import JobContext

from app.jobs.queue import RETRY, queue, recover_stalled_jobs, runtime

FINISHED_JOBS_KEPT_HOURS = 24 * 7


@queue.task(name="review_pull_request", pass_context=True, retry=RETRY)
def review_pull_request(
    context: JobContext, repo: str, installation_id: int, pr_number: int, full: bool = False
) -> None:
    from app.github.review_flow import review_pull_request as run

    run(runtime(context), repo, installation_id, pr_number, full=full, job_id=context.job.id)


@queue.task(name="index_repository", pass_context=True, retry=RETRY)
def index_repository(context: JobContext, repo: str, installation_id: int, full: bool) -> None:
    from app.github.repo_index import index_repository as run

    run(runtime(context), repo, installation_id, full=full)


@queue.task(name="purge_repository", pass_context=True, retry=RETRY)
def purge_repository(context: JobContext, repo: str) -> None:
    from app.github.repo_index import purge_repository as run

    run(runtime(context), repo)


@queue.task(name="pr_command", pass_context=True, retry=RETRY)
def pr_command(
    context: JobContext,
    repo: str,
    installation_id: int,
    pr_number: int,
    command: str,
    user: str | None,
    comment_id: int | None,
) -> None:
    from app.github.review_flow import run_command

    run_command(runtime(context), repo, installation_id, pr_number, command, user, comment_id)


@queue.periodic(cron="* * * * *", periodic_id="retry_stalled_jobs")
@queue.task(name="retry_stalled_jobs", queueing_lock="retry_stalled_jobs", pass_context=True)
async def retry_stalled_jobs(context: JobContext, timestamp: int) -> None:
    """Jobs whose worker stopped sending heartbeats (a crash) go back to the queue."""
    await recover_stalled_jobs(context.app, runtime(context).settings.stalled_worker_seconds)


@queue.periodic(cron="17 * * * *", periodic_id="prune_finished_jobs")
@queue.task(name="prune_finished_jobs", queueing_lock="prune_finished_jobs", pass_context=True)
async def prune_finished_jobs(context: JobContext, timestamp: int) -> None:
    """Finished jobs stay a week (for GET /reindex/{id} and /metrics), then go."""
    await context.app.job_manager.delete_old_jobs(
        nb_hours=FINISHED_JOBS_KEPT_HOURS, include_failed=True
    )
